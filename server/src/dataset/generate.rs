//! The generator: from a [`GenConfig`] to rows, deterministically.
//!
//! Clinics and clinicians come from stream 0 of the seed; patient `i` (with all of
//! their wounds and assessments) from stream `i + 1`, so patients can be produced
//! in batches of any size with identical results. Ids are assigned in order.
//!
//! How a wound evolves (days counted from its first assessment):
//! - *Healers* follow `A0·(e^{-kτ} − e^{-kT})/(1 − e^{-kT})`, an exponential decline
//!   that reaches 0 at the healing time `T`. `τ` is a healing clock that runs at 15 %
//!   speed during infection episodes, so infection delays healing.
//! - *Non-healers* shrink partly to a plateau and then stall or slowly grow (with a
//!   slow wobble); diabetic foot and arterial ulcers may end in amputation.
//! - Infection episodes swell the wound, raise pain and exudate and push the tissue
//!   back towards slough; their effect fades after the episode ends.
//! - The tissue score moves necrotic/slough → granulation → epithelial with progress.
//! - `area = k·length·width` with a per-wound shape factor `k` in 0.66–0.86
//!   (an ellipse is π/4 ≈ 0.785); the healing visit records area 0.
//!
//! This module must stay pure: no I/O, no clock, no global state; every random draw
//! comes from [`Sampler`].

use super::GenConfig;
use super::model::*;
use super::names::{CLINIC_KINDS, FEMALE_FIRST, LAST, MALE_FIRST, TOWNS};
use super::sample::Sampler;
use chrono::{NaiveDate, TimeDelta};
use std::ops::Range;

/// Patients per unit of scale.
pub(crate) const PATIENTS_PER_SCALE: u32 = 20;

/// How many clinics a scale has: 12 at the default scale of 100, at least 3 (one
/// per care setting).
pub(crate) fn clinic_count(scale: u32) -> usize {
    ((scale as usize * 12).div_ceil(100)).max(3)
}

/// The next ids to hand out while generating batch after batch.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NextIds {
    pub(crate) wound: i64,
    pub(crate) assessment: i64,
}

impl Default for NextIds {
    fn default() -> Self {
        NextIds {
            wound: 1,
            assessment: 1,
        }
    }
}

/// Patients with their wounds and assessments.
#[derive(Default)]
pub(crate) struct Batch {
    pub(crate) patients: Vec<Patient>,
    pub(crate) wounds: Vec<Wound>,
    pub(crate) assessments: Vec<Assessment>,
}

/// Holds the clinic-level data every patient draws on.
pub(crate) struct Generator {
    seed: u64,
    anchor: NaiveDate,
    patient_count: u32,
    clinics: Vec<Clinic>,
    clinicians: Vec<Clinician>,
    /// Relative patient volume per clinic index.
    clinic_weights: Vec<(usize, f64)>,
    /// Clinician indices per clinic index.
    staff: Vec<Vec<usize>>,
    /// Indices of hospital outpatient clinics (where referrals go).
    hospitals: Vec<usize>,
}

impl Generator {
    pub(crate) fn new(cfg: &GenConfig) -> Self {
        let mut s = Sampler::new(cfg.seed, 0);
        let n = clinic_count(cfg.scale);
        let mut clinics = Vec::with_capacity(n);
        let mut clinic_weights = Vec::with_capacity(n);
        for i in 0..n {
            let (town, region) = TOWNS[i % TOWNS.len()];
            let (kind, care_setting) = CLINIC_KINDS[i % CLINIC_KINDS.len()];
            let cycle = i / (TOWNS.len() * CLINIC_KINDS.len());
            let name = if cycle == 0 {
                format!("{town} {kind}")
            } else {
                format!("{town} {kind} {}", cycle + 1)
            };
            clinics.push(Clinic {
                id: i as i64 + 1,
                name,
                region,
                care_setting,
            });
            let volume = s.range(0.6, 1.6)
                * if care_setting == CareSetting::LongTermCare {
                    0.6
                } else {
                    1.0
                };
            clinic_weights.push((i, volume));
        }

        let mut clinicians = Vec::new();
        let mut staff = vec![Vec::new(); n];
        for (ci, clinic) in clinics.iter().enumerate() {
            use Discipline::*;
            let (fixed, extra, (lo, hi)): (&[Discipline], &[(Discipline, f64)], _) = match clinic.care_setting
            {
                CareSetting::HospitalOutpatient => (
                    &[WoundNurse, Physician, Podiatrist, VascularSurgeon],
                    &[
                        (WoundNurse, 45.0),
                        (Physician, 20.0),
                        (Podiatrist, 20.0),
                        (VascularSurgeon, 15.0),
                    ],
                    (8, 12),
                ),
                CareSetting::Community => (
                    &[WoundNurse, WoundNurse, Podiatrist],
                    &[(WoundNurse, 70.0), (Podiatrist, 15.0), (Physician, 15.0)],
                    (6, 10),
                ),
                CareSetting::LongTermCare => (
                    &[WoundNurse, Physician],
                    &[(WoundNurse, 80.0), (Physician, 20.0)],
                    (4, 7),
                ),
            };
            let count = s.int(lo, hi) as usize;
            for k in 0..count {
                let discipline = if k < fixed.len() {
                    fixed[k]
                } else {
                    s.weighted(extra)
                };
                let female = s.chance(if discipline == WoundNurse { 0.8 } else { 0.5 });
                let first = if female {
                    s.pick(&FEMALE_FIRST)
                } else {
                    s.pick(&MALE_FIRST)
                };
                let last = s.pick(&LAST);
                let name = match discipline {
                    WoundNurse => format!("{first} {last}"),
                    _ => format!("Dr. {first} {last}"),
                };
                staff[ci].push(clinicians.len());
                clinicians.push(Clinician {
                    id: clinicians.len() as i64 + 1,
                    clinic_id: clinic.id,
                    name,
                    discipline,
                });
            }
        }
        let hospitals = clinics
            .iter()
            .enumerate()
            .filter(|(_, c)| c.care_setting == CareSetting::HospitalOutpatient)
            .map(|(i, _)| i)
            .collect();

        Generator {
            seed: cfg.seed,
            anchor: cfg.anchor,
            patient_count: cfg.scale * PATIENTS_PER_SCALE,
            clinics,
            clinicians,
            clinic_weights,
            staff,
            hospitals,
        }
    }

    pub(crate) fn clinics(&self) -> &[Clinic] {
        &self.clinics
    }

    pub(crate) fn clinicians(&self) -> &[Clinician] {
        &self.clinicians
    }

    pub(crate) fn patient_count(&self) -> u32 {
        self.patient_count
    }

    /// Patients with indices in `range` (ids `index + 1`), their wounds and assessments.
    pub(crate) fn batch(&self, range: Range<u32>, ids: &mut NextIds) -> Batch {
        let mut out = Batch::default();
        for index in range {
            let mut s = Sampler::new(self.seed, u64::from(index) + 1);
            self.patient(index, &mut s, ids, &mut out);
        }
        out
    }

    fn patient(&self, index: u32, s: &mut Sampler, ids: &mut NextIds, out: &mut Batch) {
        let ci = s.weighted(&self.clinic_weights);
        let clinic = &self.clinics[ci];
        let ltc = clinic.care_setting == CareSetting::LongTermCare;

        let sex = if s.chance(if ltc { 0.62 } else { 0.5 }) {
            Sex::Female
        } else {
            Sex::Male
        };
        // Skewed older: the largest of two (long-term care: three) uniform draws.
        let mut u = s.unit().max(s.unit());
        if ltc {
            u = u.max(s.unit());
        }
        let age = 18 + (u * 81.0) as i64; // 18..=98
        let birth_date = days_after(self.anchor, -(age * 36525 / 100 + s.int(1, 364)));
        let mut bmi = s.gauss(27.5, 5.5) - if ltc { 1.5 } else { 0.0 } - if age > 80 { 2.0 } else { 0.0 };
        bmi = round_to(bmi.clamp(15.0, 55.0), 1);
        let p_diabetes = 0.21
            + 0.012 * (bmi - 25.0).clamp(-5.0, 15.0)
            + if age > 60 { 0.08 } else { 0.0 }
            + if age > 75 { 0.02 } else { 0.0 };
        let diabetes = s.chance(p_diabetes);
        let p_smoker = match age {
            ..50 => 0.28,
            50..65 => 0.2,
            65..80 => 0.12,
            _ => 0.06,
        } * if ltc { 0.5 } else { 1.0 };
        let smoker = s.chance(p_smoker);
        use Mobility::*;
        let mobility = s.weighted(&match (ltc, age) {
            (true, _) => [
                (Independent, 10.0),
                (Assisted, 35.0),
                (Wheelchair, 30.0),
                (Bedbound, 25.0),
            ],
            (false, ..65) => [
                (Independent, 70.0),
                (Assisted, 20.0),
                (Wheelchair, 8.0),
                (Bedbound, 2.0),
            ],
            (false, 65..80) => [
                (Independent, 50.0),
                (Assisted, 32.0),
                (Wheelchair, 12.0),
                (Bedbound, 6.0),
            ],
            (false, _) => [
                (Independent, 28.0),
                (Assisted, 40.0),
                (Wheelchair, 18.0),
                (Bedbound, 14.0),
            ],
        });
        let first = if sex == Sex::Female {
            s.pick(&FEMALE_FIRST)
        } else {
            s.pick(&MALE_FIRST)
        };
        let full_name = format!("{first} {}", s.pick(&LAST));
        let id = i64::from(index) + 1;
        let patient = Patient {
            id,
            clinic_id: clinic.id,
            mrn: format!("CL{id:07}"),
            full_name,
            sex,
            birth_date,
            diabetes,
            smoker,
            mobility,
            bmi,
        };

        let p_more = 0.65 + if mobility == Bedbound { 0.1 } else { 0.0 };
        let mut wounds = 1;
        while wounds < 8 && s.chance(p_more) {
            wounds += 1;
        }
        let ctx = PatientCtx {
            patient: &patient,
            age,
            clinic_index: ci,
        };
        for _ in 0..wounds {
            self.wound(&ctx, s, ids, out);
        }
        out.patients.push(patient);
    }

    fn wound(&self, ctx: &PatientCtx<'_>, s: &mut Sampler, ids: &mut NextIds, out: &mut Batch) {
        let p = ctx.patient;
        let setting = self.clinics[ctx.clinic_index].care_setting;
        let etiology = s.weighted(&etiology_weights(p, ctx.age, setting));
        let location = s.weighted(location_weights(etiology));
        let stage = (etiology == Etiology::PressureInjury).then(|| {
            use PressureStage::*;
            s.weighted(&[
                (Stage1, 12.0),
                (Stage2, 36.0),
                (Stage3, 25.0),
                (Stage4, 11.0),
                (Unstageable, 9.0),
                (DeepTissue, 7.0),
            ])
        });
        let depth = pick_depth(s, etiology, stage);
        let t = traits(etiology, stage, depth);

        // Which clinic treats it: usually the patient's own; some are referred to a hospital.
        let p_referral = match etiology {
            Etiology::DiabeticFootUlcer | Etiology::ArterialLegUlcer
                if setting != CareSetting::HospitalOutpatient =>
            {
                0.25
            }
            _ => 0.06,
        };
        let wci = if !self.hospitals.is_empty() && s.chance(p_referral) {
            *s.pick(&self.hospitals)
        } else {
            ctx.clinic_index
        };
        let staff = &self.staff[wci];
        let preferred = match etiology {
            Etiology::DiabeticFootUlcer => Discipline::Podiatrist,
            Etiology::ArterialLegUlcer => Discipline::VascularSurgeon,
            Etiology::Surgical if s.chance(0.5) => Discipline::Physician,
            _ => Discipline::WoundNurse,
        };
        let matching: Vec<usize> = staff
            .iter()
            .copied()
            .filter(|&k| self.clinicians[k].discipline == preferred)
            .collect();
        let primary = if matching.is_empty() {
            *s.pick(staff)
        } else {
            *s.pick(&matching)
        };

        // Timeline.
        let adult = days_after(p.birth_date, 18 * 366);
        let onset = days_after(self.anchor, -s.int(0, 3 * 365))
            .max(adult)
            .min(self.anchor);
        let delay = s.int(0, t.max_presentation_delay);
        let first_visit = days_after(onset, delay).min(self.anchor);
        let horizon = (self.anchor - first_visit).num_days();

        // Infection plan.
        let mut p_infect = t.p_infection;
        if p.diabetes && etiology != Etiology::DiabeticFootUlcer {
            p_infect *= 1.3;
        }
        let infected_plan = s.chance(p_infect.min(0.9));

        // Healing plan.
        let mut p_heal = t.p_heal;
        let mut median_days = t.median_heal_weeks * 7.0;
        if p.diabetes && etiology != Etiology::DiabeticFootUlcer {
            p_heal *= 0.9;
            median_days *= 1.25;
        }
        if p.smoker {
            p_heal *= if etiology == Etiology::ArterialLegUlcer {
                0.8
            } else {
                0.92
            };
            median_days *= 1.2;
        }
        if ctx.age > 80 {
            median_days *= 1.15;
        }
        if p.bmi > 35.0 {
            median_days *= 1.1;
        }
        if etiology == Etiology::PressureInjury && p.mobility == Mobility::Bedbound {
            p_heal *= 0.85;
            median_days *= 1.3;
        }
        if infected_plan {
            p_heal *= if etiology == Etiology::DiabeticFootUlcer {
                0.55
            } else {
                0.8
            };
            median_days *= 1.3;
        }
        // Acute wounds that do not heal on time heal late rather than never.
        let acute = matches!(
            etiology,
            Etiology::Surgical | Etiology::SkinTear | Etiology::Burn | Etiology::Trauma
        );
        let mut heals = s.chance(p_heal);
        if !heals && acute {
            heals = true;
            median_days *= 3.5;
        }
        let heal_days = s.lognormal(median_days, 0.45).clamp(7.0, 700.0);

        let mut episodes = Vec::new();
        if infected_plan {
            let count = s.weighted(&[(1, 70.0), (2, 22.0), (3, 8.0)]);
            let window = if heals { (0.7 * heal_days) as i64 } else { 540 };
            let mut start = if etiology == Etiology::DiabeticFootUlcer && s.chance(0.35) {
                0
            } else {
                s.int(0, window.max(1))
            };
            for _ in 0..count {
                let len = s.int(
                    14,
                    if etiology == Etiology::DiabeticFootUlcer {
                        56
                    } else {
                        35
                    },
                );
                episodes.push(Episode {
                    start,
                    end: start + len,
                    severity: s.range(0.15, 0.5),
                });
                start += len + s.int(21, 120);
            }
        }

        let trajectory = if heals {
            Trajectory::Heals {
                total: heal_days,
                k: s.range(1.0, 2.5) / heal_days,
            }
        } else {
            Trajectory::Stalls {
                plateau: s.range(0.45, 1.05),
                k: s.range(0.02, 0.06),
                growth: s.gauss(0.0002, 0.0006),
                wobble: s.range(0.03, 0.1),
                period: s.range(40.0, 120.0),
                phase: s.range(0.0, std::f64::consts::TAU),
            }
        };
        let healed_day = match trajectory {
            Trajectory::Heals { total, .. } => Some(day_healed(total, &episodes)),
            Trajectory::Stalls { .. } => None,
        };
        let amputation_day = if heals {
            None
        } else {
            let p_amp = match etiology {
                Etiology::DiabeticFootUlcer if infected_plan => 0.3,
                Etiology::DiabeticFootUlcer => 0.08,
                Etiology::ArterialLegUlcer => 0.2,
                _ => 0.0,
            };
            s.chance(p_amp).then(|| match episodes.last() {
                Some(e) => e.end + s.int(0, 60),
                None => s.int(42, 400),
            })
        };
        let (status, end_day) = match (healed_day, amputation_day) {
            (Some(d), _) if d <= horizon => (WoundStatus::Healed, d),
            (_, Some(d)) if d <= horizon => (WoundStatus::Amputated, d),
            _ => (WoundStatus::Open, horizon),
        };

        // Visit days.
        let base_interval = match (setting, etiology) {
            (CareSetting::LongTermCare, _) => 7,
            (_, Etiology::VenousLegUlcer) => {
                if s.chance(0.75) {
                    7
                } else {
                    14
                }
            }
            (_, Etiology::ArterialLegUlcer) => {
                if s.chance(0.5) {
                    7
                } else {
                    14
                }
            }
            _ => 7,
        };
        let mut days = vec![0i64];
        let mut d = 0;
        loop {
            let infected_now = episodes.iter().any(|e| e.contains(d));
            let interval = if infected_now {
                7
            } else if d > 182 {
                base_interval.max(14)
            } else {
                base_interval
            };
            let mut next = d + interval + s.int(-1, 2);
            // An infection brings the patient in between scheduled visits.
            if let Some(e) = episodes.iter().find(|e| e.start > d && e.start < next) {
                next = e.start + s.int(0, 3);
            }
            let past_end = if status == WoundStatus::Open {
                next > end_day
            } else {
                next >= end_day
            };
            if past_end {
                break;
            }
            days.push(next);
            d = next;
        }
        if status != WoundStatus::Open && end_day > 0 {
            days.push(end_day);
        }

        // Per-wound measurement traits.
        let a0 = s.lognormal(t.area_median, t.area_sigma).clamp(0.3, 250.0);
        let aspect = s.range(t.aspect.0, t.aspect.1);
        let shape_k = s.range(0.7, 0.82);
        let depth0 = s.range(t.depth_cm.0, t.depth_cm.1);
        let pain_offset = s.gauss(0.0, 0.8);
        let tissue_offset = s.gauss(0.0, 0.25);

        let wound_id = ids.wound;
        ids.wound += 1;
        let first_assessment = out.assessments.len();
        for &day in &days {
            let clinician = if s.chance(0.7) { primary } else { *s.pick(staff) };
            let assessed_on = days_after(first_visit, day);
            let clinician_id = self.clinicians[clinician].id;
            let id = ids.assessment;
            ids.assessment += 1;
            if status == WoundStatus::Healed && day == end_day {
                out.assessments.push(Assessment {
                    id,
                    wound_id,
                    clinician_id,
                    assessed_on,
                    length_cm: 0.0,
                    width_cm: 0.0,
                    depth_cm: 0.0,
                    area_cm2: 0.0,
                    pain_score: if s.chance(0.8) { 0 } else { 1 },
                    exudate: Exudate::None,
                    tissue_type: TissueType::Epithelial,
                    infection_signs: false,
                });
                continue;
            }
            let (swelling, level) = infection_effect(day, &episodes);
            let (base, progress) = trajectory.at(day, &episodes);
            let truth = (a0 * base * swelling).clamp(0.1, 400.0);
            let measured = (truth * s.gauss(0.0, 0.07).exp()).clamp(0.1, 500.0);
            let aspect_v = (aspect * s.gauss(0.0, 0.05).exp()).max(1.0);
            let k = (shape_k + s.gauss(0.0, 0.015)).clamp(0.66, 0.86);
            let length = round_to((measured * aspect_v / k).sqrt(), 1).max(0.3);
            let width = round_to((measured / (k * aspect_v)).sqrt(), 1).clamp(0.2, length);
            let area = round_to(k * length * width, 2);
            let ratio = truth / a0;
            let depth_cm = round_to(depth0 * ratio.sqrt().min(1.3), 1);

            let mut score = t.tissue_start + (3.4 - t.tissue_start) * progress - 1.0 * level
                + tissue_offset
                + s.gauss(0.0, 0.35);
            score = score.max(t.tissue_floor);
            let tissue_type = TissueType::ALL[(score.floor().clamp(0.0, 3.0)) as usize];

            let pain = t.pain * (0.5 + 0.5 * ratio.min(2.0)) + pain_offset + 2.5 * level + s.gauss(0.0, 0.9);
            let pain_score = pain.round().clamp(0.0, 10.0) as i32;

            let wet = t.exudate * (0.45 + 0.55 * ratio.min(1.5)) + 1.4 * level + s.gauss(0.0, 0.35);
            let exudate = match wet {
                w if w < 0.5 => Exudate::None,
                w if w < 1.4 => Exudate::Low,
                w if w < 2.2 => Exudate::Moderate,
                _ => Exudate::High,
            };
            out.assessments.push(Assessment {
                id,
                wound_id,
                clinician_id,
                assessed_on,
                length_cm: length,
                width_cm: width,
                depth_cm,
                area_cm2: area,
                pain_score,
                exudate,
                tissue_type,
                infection_signs: episodes.iter().any(|e| e.contains(day)),
            });
        }
        let mine = &out.assessments[first_assessment..];
        out.wounds.push(Wound {
            id: wound_id,
            patient_id: p.id,
            clinic_id: self.clinics[wci].id,
            etiology,
            location,
            stage,
            depth,
            onset_date: onset,
            healed_date: (status == WoundStatus::Healed).then(|| days_after(first_visit, end_day)),
            status,
            infected: mine.iter().any(|a| a.infection_signs),
            initial_area_cm2: mine[0].area_cm2,
        });
    }
}

struct PatientCtx<'a> {
    patient: &'a Patient,
    age: i64,
    clinic_index: usize,
}

/// A clinically diagnosed infection, in days since the first visit (`end` exclusive).
struct Episode {
    start: i64,
    end: i64,
    /// Relative swelling of the wound at the episode's height.
    severity: f64,
}

impl Episode {
    fn contains(&self, day: i64) -> bool {
        (self.start..self.end).contains(&day)
    }
}

/// How fast healing proceeds during an infection episode (relative to normal).
const INFECTED_HEALING_SPEED: f64 = 0.15;

enum Trajectory {
    /// Heals after `total` days of healing clock.
    Heals { total: f64, k: f64 },
    /// Shrinks towards `plateau`·A0, then drifts by `growth` per day with a wobble.
    Stalls {
        plateau: f64,
        k: f64,
        growth: f64,
        wobble: f64,
        period: f64,
        phase: f64,
    },
}

impl Trajectory {
    /// Area relative to the initial area (before infection swelling) and healing
    /// progress in 0..1 on `day`.
    fn at(&self, day: i64, episodes: &[Episode]) -> (f64, f64) {
        match *self {
            Trajectory::Heals { total, k } => {
                let tau = healing_clock(day, episodes).min(total);
                let end = (-k * total).exp();
                (((-k * tau).exp() - end) / (1.0 - end), tau / total)
            }
            Trajectory::Stalls {
                plateau,
                k,
                growth,
                wobble,
                period,
                phase,
            } => {
                let d = day as f64;
                let shrink = plateau + (1.0 - plateau) * (-k * d).exp();
                let wave = 1.0 + wobble * (std::f64::consts::TAU * d / period + phase).sin();
                let rel = (shrink * (growth * d).exp() * wave).clamp(0.2, 3.5);
                (
                    rel,
                    ((1.0 - plateau).max(0.0) * 0.5 * (1.0 - (-k * d).exp())).clamp(0.0, 1.0),
                )
            }
        }
    }
}

/// Days of healing accumulated by `day`: infection episodes slow the clock.
fn healing_clock(day: i64, episodes: &[Episode]) -> f64 {
    let infected = episodes
        .iter()
        .map(|e| (day.min(e.end) - e.start).max(0))
        .sum::<i64>() as f64;
    day as f64 - infected * (1.0 - INFECTED_HEALING_SPEED)
}

/// The first day on which the healing clock reaches `total` (never inside an episode).
fn day_healed(total: f64, episodes: &[Episode]) -> i64 {
    let mut day = total.ceil() as i64;
    while healing_clock(day, episodes) < total || episodes.iter().any(|e| e.contains(day)) {
        day += 1;
    }
    day.max(1)
}

/// Swelling factor (≥ 1) and an infection level in 0..1 on `day`: ramps up over the
/// first ten days of an episode and fades with a two-week time constant after it.
fn infection_effect(day: i64, episodes: &[Episode]) -> (f64, f64) {
    let mut swelling = 1.0;
    let mut level: f64 = 0.0;
    for e in episodes.iter().filter(|e| day >= e.start) {
        let l = if day < e.end {
            ((day - e.start + 1) as f64 / 10.0).min(1.0)
        } else {
            ((e.end - e.start) as f64 / 10.0).min(1.0) * (-((day - e.end) as f64) / 14.0).exp()
        };
        swelling += e.severity * l;
        level = level.max(l);
    }
    (swelling, level.min(1.0))
}

/// Per-etiology (and stage/depth) parameters.
struct Traits {
    p_infection: f64,
    p_heal: f64,
    median_heal_weeks: f64,
    max_presentation_delay: i64,
    area_median: f64,
    area_sigma: f64,
    /// Length/width ratio range.
    aspect: (f64, f64),
    /// Initial depth range in cm.
    depth_cm: (f64, f64),
    /// Tissue score at the start (0 necrotic, 1 slough, 2 granulation, 3 epithelial).
    tissue_start: f64,
    /// The tissue score never goes below this (stage 2 has no slough, stage 1 is intact).
    tissue_floor: f64,
    pain: f64,
    exudate: f64,
}

fn traits(etiology: Etiology, stage: Option<PressureStage>, depth: Depth) -> Traits {
    use Etiology::*;
    let depth_cm = match depth {
        Depth::Superficial => (0.0, 0.0),
        Depth::PartialThickness => (0.1, 0.3),
        Depth::FullThickness => match (etiology, stage) {
            (PressureInjury, Some(PressureStage::Stage4)) => (1.0, 4.0),
            (PressureInjury, Some(PressureStage::DeepTissue)) => (0.0, 0.2),
            (Surgical, _) => (0.5, 4.0),
            (SkinTear | Burn | Trauma, _) => (0.3, 1.2),
            _ => (0.4, 2.5),
        },
    };
    let base = Traits {
        p_infection: 0.15,
        p_heal: 0.9,
        median_heal_weeks: 4.0,
        max_presentation_delay: 2,
        area_median: 5.0,
        area_sigma: 0.9,
        aspect: (1.0, 1.8),
        depth_cm,
        tissue_start: 1.9,
        tissue_floor: 0.0,
        pain: 3.0,
        exudate: 1.2,
    };
    match etiology {
        PressureInjury => {
            use PressureStage::*;
            let stage = stage.unwrap_or(Stage2);
            let (p_heal, weeks, area, tissue_start, p_infection) = match stage {
                Stage1 => (0.97, 2.0, 3.0, 3.2, 0.02),
                Stage2 => (0.88, 5.0, 2.5, 2.4, 0.08),
                Stage3 => (0.7, 12.0, 7.0, 1.3, 0.25),
                Stage4 => (0.5, 20.0, 14.0, 0.9, 0.3),
                Unstageable => (0.55, 18.0, 10.0, 0.4, 0.25),
                DeepTissue => (0.85, 5.0, 6.0, 2.6, 0.02),
            };
            Traits {
                p_infection,
                p_heal,
                median_heal_weeks: weeks,
                max_presentation_delay: 7,
                area_median: area,
                area_sigma: 0.8,
                tissue_start,
                tissue_floor: match stage {
                    Stage1 => 3.0,
                    Stage2 => 2.0,
                    _ => 0.0,
                },
                pain: if stage == Stage1 { 1.5 } else { 3.0 },
                exudate: match stage {
                    Stage1 | DeepTissue => 0.2,
                    Stage2 => 1.0,
                    _ => 1.5,
                },
                ..base
            }
        }
        DiabeticFootUlcer => Traits {
            p_infection: 0.38,
            p_heal: 0.7,
            median_heal_weeks: 12.0,
            max_presentation_delay: 21,
            area_median: 2.0,
            tissue_start: 1.5,
            pain: 1.5, // neuropathy
            exudate: 1.4,
            ..base
        },
        VenousLegUlcer => Traits {
            p_infection: 0.15,
            p_heal: 0.72,
            median_heal_weeks: 16.0,
            max_presentation_delay: 28,
            area_median: 10.0,
            area_sigma: 1.0,
            aspect: (1.2, 2.5),
            tissue_start: 1.3,
            pain: 4.0,
            exudate: 2.0,
            ..base
        },
        ArterialLegUlcer => Traits {
            p_infection: 0.22,
            p_heal: 0.42,
            median_heal_weeks: 20.0,
            max_presentation_delay: 28,
            area_median: 3.0,
            tissue_start: 0.8,
            pain: 6.0,
            exudate: 0.7,
            ..base
        },
        Surgical => Traits {
            p_infection: 0.18,
            p_heal: 0.88,
            median_heal_weeks: 6.0,
            area_median: 8.0,
            area_sigma: 1.0,
            aspect: (3.0, 6.0),
            ..base
        },
        SkinTear => Traits {
            p_infection: 0.05,
            p_heal: 0.97,
            median_heal_weeks: 2.5,
            area_median: 4.0,
            area_sigma: 0.7,
            aspect: (1.5, 3.0),
            tissue_start: 2.6,
            exudate: 0.8,
            ..base
        },
        Burn => {
            let (p_heal, weeks, tissue_start) = match depth {
                Depth::Superficial => (0.98, 2.0, 2.8),
                Depth::PartialThickness => (0.95, 3.0, 2.0),
                Depth::FullThickness => (0.8, 8.0, 0.6),
            };
            Traits {
                p_infection: 0.15,
                p_heal,
                median_heal_weeks: weeks,
                area_median: 10.0,
                area_sigma: 1.0,
                tissue_start,
                pain: 5.0,
                exudate: 1.8,
                ..base
            }
        }
        Trauma => Traits {
            p_heal: 0.92,
            area_median: 5.0,
            pain: 3.5,
            ..base
        },
    }
}

fn etiology_weights(p: &Patient, age: i64, setting: CareSetting) -> [(Etiology, f64); 8] {
    use Etiology::*;
    let mut pi = 18.0;
    let mut dfu = if p.diabetes { 55.0 } else { 0.0 };
    let mut vlu = 20.0;
    let mut alu = 5.0;
    let mut surgical = 14.0;
    let mut tear = 9.0;
    let mut burn = 3.0;
    let mut trauma = 8.0;
    pi *= match p.mobility {
        Mobility::Bedbound => 4.0,
        Mobility::Wheelchair => 2.5,
        Mobility::Assisted => 1.2,
        Mobility::Independent => 0.35,
    };
    if age > 75 {
        tear *= 2.0;
    }
    if age < 50 {
        tear *= 0.25;
    }
    if age < 60 {
        burn *= 2.0;
        trauma *= 1.8;
    }
    if age > 70 {
        vlu *= 1.3;
        alu *= 1.3;
    }
    if age < 45 {
        vlu *= 0.4;
    }
    if p.bmi > 30.0 {
        vlu *= 1.4;
    }
    if p.smoker {
        alu *= 2.5;
    }
    if p.diabetes {
        alu *= 1.6;
    }
    match setting {
        CareSetting::LongTermCare => {
            pi *= 2.0;
            tear *= 2.0;
            surgical *= 0.3;
            burn *= 0.3;
            trauma *= 0.5;
            dfu *= 0.7;
        }
        CareSetting::HospitalOutpatient => {
            surgical *= 1.5;
            alu *= 1.8;
            dfu *= 1.3;
        }
        CareSetting::Community => vlu *= 1.4,
    }
    [
        (PressureInjury, pi),
        (DiabeticFootUlcer, dfu),
        (VenousLegUlcer, vlu),
        (ArterialLegUlcer, alu),
        (Surgical, surgical),
        (SkinTear, tear),
        (Burn, burn),
        (Trauma, trauma),
    ]
}

/// Body sites where each etiology occurs, with relative frequency.
pub(crate) fn location_weights(etiology: Etiology) -> &'static [(Location, f64)] {
    use Location::*;
    match etiology {
        Etiology::PressureInjury => &[(Sacrum, 45.0), (Heel, 35.0), (Hip, 20.0)],
        Etiology::DiabeticFootUlcer => &[(Toe, 40.0), (Foot, 40.0), (Heel, 20.0)],
        Etiology::VenousLegUlcer => &[(LowerLeg, 65.0), (Ankle, 35.0)],
        Etiology::ArterialLegUlcer => &[(Toe, 35.0), (Foot, 25.0), (LowerLeg, 30.0), (Ankle, 10.0)],
        Etiology::Surgical => &[
            (Abdomen, 45.0),
            (Hip, 15.0),
            (Chest, 12.0),
            (Back, 8.0),
            (LowerLeg, 12.0),
            (Foot, 8.0),
        ],
        Etiology::SkinTear => &[(Arm, 60.0), (LowerLeg, 28.0), (Hand, 12.0)],
        Etiology::Burn => &[
            (Hand, 25.0),
            (Arm, 30.0),
            (LowerLeg, 15.0),
            (Chest, 12.0),
            (Foot, 10.0),
            (Abdomen, 8.0),
        ],
        Etiology::Trauma => &[
            (LowerLeg, 40.0),
            (Arm, 22.0),
            (Hand, 12.0),
            (Foot, 12.0),
            (Head, 8.0),
            (Ankle, 6.0),
        ],
    }
}

fn pick_depth(s: &mut Sampler, etiology: Etiology, stage: Option<PressureStage>) -> Depth {
    use Depth::*;
    use PressureStage::*;
    match (etiology, stage) {
        (Etiology::PressureInjury, Some(Stage1)) => Superficial,
        (Etiology::PressureInjury, Some(Stage2)) => PartialThickness,
        (Etiology::PressureInjury, _) => FullThickness,
        (Etiology::DiabeticFootUlcer, _) => s.weighted(&[(PartialThickness, 45.0), (FullThickness, 55.0)]),
        (Etiology::VenousLegUlcer, _) => s.weighted(&[
            (Superficial, 15.0),
            (PartialThickness, 60.0),
            (FullThickness, 25.0),
        ]),
        (Etiology::ArterialLegUlcer, _) => s.weighted(&[(PartialThickness, 40.0), (FullThickness, 60.0)]),
        (Etiology::Surgical, _) => s.weighted(&[(PartialThickness, 30.0), (FullThickness, 70.0)]),
        (Etiology::SkinTear, _) => s.weighted(&[(Superficial, 55.0), (PartialThickness, 45.0)]),
        (Etiology::Burn, _) => s.weighted(&[
            (Superficial, 30.0),
            (PartialThickness, 55.0),
            (FullThickness, 15.0),
        ]),
        (Etiology::Trauma, _) => s.weighted(&[
            (Superficial, 25.0),
            (PartialThickness, 50.0),
            (FullThickness, 25.0),
        ]),
    }
}

fn days_after(date: NaiveDate, days: i64) -> NaiveDate {
    date + TimeDelta::days(days)
}

/// Rounds to `places` decimals (values are stored rounded so every backend holds
/// exactly the same numbers).
fn round_to(x: f64, places: i32) -> f64 {
    let f = 10f64.powi(places);
    (x * f).round() / f
}
