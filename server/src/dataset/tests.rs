//! Plausibility invariants of the generated data (pure, no database).

use super::generate::{Generator, NextIds, location_weights};
use super::model::*;
use super::*;
use std::collections::HashMap;

fn small() -> Dataset {
    generate(&GenConfig::new(10, 7))
}

fn by_wound(data: &Dataset) -> HashMap<i64, Vec<&Assessment>> {
    let mut map: HashMap<i64, Vec<&Assessment>> = HashMap::new();
    for a in &data.assessments {
        map.entry(a.wound_id).or_default().push(a);
    }
    map
}

#[test]
fn default_scale_has_the_promised_size() {
    let data = generate(&GenConfig::default());
    let counts = TableCounts::of(&data);
    assert_eq!(counts.clinics, 12);
    assert_eq!(counts.patients, 2_000);
    assert!((80..=110).contains(&counts.clinicians), "{counts}");
    assert!((100_000..=130_000).contains(&counts.assessments), "{counts}");
    assert!((4_000..=6_000).contains(&counts.wounds), "{counts}");
}

#[test]
fn same_seed_same_rows_other_seed_other_rows() {
    let a = generate(&GenConfig::new(3, 11));
    let b = generate(&GenConfig::new(3, 11));
    assert_eq!(a, b);
    let c = generate(&GenConfig::new(3, 12));
    assert_ne!(a.patients, c.patients);
    assert_ne!(a.assessments, c.assessments);
}

#[test]
fn batching_does_not_change_the_rows() {
    let cfg = GenConfig::new(4, 5);
    let whole = generate(&cfg);
    let generator = Generator::new(&cfg);
    let mut ids = NextIds::default();
    let (mut patients, mut wounds, mut assessments) = (Vec::new(), Vec::new(), Vec::new());
    for start in (0..generator.patient_count()).step_by(7) {
        let batch = generator.batch(start..(start + 7).min(generator.patient_count()), &mut ids);
        patients.extend(batch.patients);
        wounds.extend(batch.wounds);
        assessments.extend(batch.assessments);
    }
    assert_eq!(whole.patients, patients);
    assert_eq!(whole.wounds, wounds);
    assert_eq!(whole.assessments, assessments);
}

#[test]
fn ids_are_sequential_and_references_resolve() {
    let data = small();
    let seq = |ids: Vec<i64>| ids.iter().enumerate().all(|(i, id)| *id == i as i64 + 1);
    assert!(seq(data.clinics.iter().map(|r| r.id).collect()));
    assert!(seq(data.clinicians.iter().map(|r| r.id).collect()));
    assert!(seq(data.patients.iter().map(|r| r.id).collect()));
    assert!(seq(data.wounds.iter().map(|r| r.id).collect()));
    assert!(seq(data.assessments.iter().map(|r| r.id).collect()));
    let clinics = data.clinics.len() as i64;
    assert!(
        data.clinicians
            .iter()
            .all(|c| (1..=clinics).contains(&c.clinic_id))
    );
    assert!(data.patients.iter().all(|p| (1..=clinics).contains(&p.clinic_id)));
    let patients = data.patients.len() as i64;
    assert!(data.wounds.iter().all(|w| (1..=patients).contains(&w.patient_id)));
    assert!(data.wounds.iter().all(|w| (1..=clinics).contains(&w.clinic_id)));
    let wounds = data.wounds.len() as i64;
    for a in &data.assessments {
        assert!((1..=wounds).contains(&a.wound_id));
        let clinician = &data.clinicians[a.clinician_id as usize - 1];
        assert_eq!(
            clinician.clinic_id,
            data.wounds[a.wound_id as usize - 1].clinic_id,
            "seen in the wound's clinic"
        );
    }
    let names: std::collections::HashSet<_> = data.clinics.iter().map(|c| &c.name).collect();
    assert_eq!(names.len(), data.clinics.len(), "clinic names are unique");
    let mrns: std::collections::HashSet<_> = data.patients.iter().map(|p| &p.mrn).collect();
    assert_eq!(mrns.len(), data.patients.len(), "MRNs are unique");
}

#[test]
fn many_clinics_keep_unique_names_and_every_care_setting() {
    let generator = Generator::new(&GenConfig::new(1_500, 1));
    let clinics = generator.clinics();
    assert_eq!(clinics.len(), 180);
    let names: std::collections::HashSet<_> = clinics.iter().map(|c| &c.name).collect();
    assert_eq!(names.len(), clinics.len());
    for setting in CareSetting::ALL {
        assert!(
            Generator::new(&GenConfig::new(1, 1))
                .clinics()
                .iter()
                .any(|c| c.care_setting == *setting)
        );
    }
}

#[test]
fn every_assessment_lies_between_onset_and_healing_or_the_anchor() {
    let data = small();
    let visits = by_wound(&data);
    for w in &data.wounds {
        let list = &visits[&w.id];
        assert!(!list.is_empty(), "wound {} has assessments", w.id);
        assert!(
            list.windows(2).all(|p| p[0].assessed_on < p[1].assessed_on),
            "dates strictly increase"
        );
        let last = list.last().unwrap().assessed_on;
        assert!(list[0].assessed_on >= w.onset_date);
        assert!(last <= DEFAULT_ANCHOR);
        assert!(w.onset_date >= DEFAULT_ANCHOR - chrono::TimeDelta::days(3 * 366));
        match w.status {
            WoundStatus::Healed => {
                assert_eq!(Some(last), w.healed_date, "the last visit records the healing");
            }
            _ => assert_eq!(w.healed_date, None, "only healed wounds have a healed date"),
        }
    }
}

#[test]
fn healed_wounds_end_closed_and_open_ones_do_not() {
    let data = small();
    let visits = by_wound(&data);
    for w in &data.wounds {
        let list = &visits[&w.id];
        let last = list.last().unwrap();
        if w.status == WoundStatus::Healed {
            assert!(
                last.area_cm2 <= 0.1,
                "healed wound {} ends at {}",
                w.id,
                last.area_cm2
            );
            assert_eq!(last.tissue_type, TissueType::Epithelial);
            assert_eq!(last.exudate, Exudate::None);
            assert!(
                list[..list.len() - 1].iter().all(|a| a.area_cm2 > 0.0),
                "only the closing visit is 0"
            );
        } else {
            assert!(list.iter().all(|a| a.area_cm2 > 0.0), "an open wound has an area");
        }
        assert_eq!(
            w.initial_area_cm2, list[0].area_cm2,
            "initial area is the first measurement"
        );
        assert!(w.initial_area_cm2 > 0.0);
    }
}

#[test]
fn area_matches_length_times_width_times_a_shape_factor() {
    for a in &small().assessments {
        assert!(a.width_cm <= a.length_cm, "length is the longer axis: {a:?}");
        let rect = a.length_cm * a.width_cm;
        if rect == 0.0 {
            assert_eq!(a.area_cm2, 0.0);
            continue;
        }
        let k = a.area_cm2 / rect;
        assert!(
            (0.6..=0.92).contains(&k),
            "area {} vs {}×{} (k = {k})",
            a.area_cm2,
            a.length_cm,
            a.width_cm
        );
        assert!(a.depth_cm >= 0.0 && a.depth_cm <= 5.5, "{a:?}");
    }
}

#[test]
fn scores_stay_in_their_ranges() {
    let data = small();
    assert!(data.assessments.iter().all(|a| (0..=10).contains(&a.pain_score)));
    for p in &data.patients {
        let age = DEFAULT_ANCHOR.years_since(p.birth_date).unwrap();
        assert!((18..=98).contains(&age), "age {age}");
        assert!((15.0..=55.0).contains(&p.bmi));
    }
}

#[test]
fn stages_belong_to_pressure_injuries_only_and_locations_fit_the_etiology() {
    for w in &small().wounds {
        assert_eq!(w.stage.is_some(), w.etiology == Etiology::PressureInjury, "{w:?}");
        assert!(
            location_weights(w.etiology).iter().any(|(l, _)| *l == w.location),
            "{w:?}"
        );
        if w.etiology == Etiology::DiabeticFootUlcer {
            assert!(matches!(
                w.location,
                Location::Foot | Location::Toe | Location::Heel
            ));
        }
        if w.etiology == Etiology::VenousLegUlcer {
            assert!(matches!(w.location, Location::LowerLeg | Location::Ankle));
        }
        if w.etiology == Etiology::PressureInjury {
            assert!(matches!(
                w.location,
                Location::Sacrum | Location::Heel | Location::Hip
            ));
        }
        match w.stage {
            Some(PressureStage::Stage1) => assert_eq!(w.depth, Depth::Superficial),
            Some(PressureStage::Stage2) => assert_eq!(w.depth, Depth::PartialThickness),
            Some(_) => assert_eq!(w.depth, Depth::FullThickness),
            None => {}
        }
    }
}

#[test]
fn infected_flag_matches_the_assessments_and_dfus_need_diabetes() {
    let data = small();
    let visits = by_wound(&data);
    for w in &data.wounds {
        assert_eq!(
            w.infected,
            visits[&w.id].iter().any(|a| a.infection_signs),
            "wound {}",
            w.id
        );
        if w.etiology == Etiology::DiabeticFootUlcer {
            assert!(data.patients[w.patient_id as usize - 1].diabetes);
        }
        if w.status == WoundStatus::Amputated {
            assert!(matches!(
                w.etiology,
                Etiology::DiabeticFootUlcer | Etiology::ArterialLegUlcer
            ));
        }
    }
}

/// Median days from first assessment to healing, and the share healed, per etiology.
fn healing_stats(data: &Dataset, filter: impl Fn(&Wound) -> bool) -> (f64, f64) {
    let visits = by_wound(data);
    let mut days = Vec::new();
    let mut total = 0;
    for w in data.wounds.iter().filter(|w| filter(w)) {
        // Only wounds old enough to have had a fair chance to heal.
        if (DEFAULT_ANCHOR - w.onset_date).num_days() < 365 {
            continue;
        }
        total += 1;
        if let Some(h) = w.healed_date {
            days.push((h - visits[&w.id][0].assessed_on).num_days());
        }
    }
    days.sort_unstable();
    let median = days.get(days.len() / 2).copied().unwrap_or(i64::MAX) as f64;
    (median, days.len() as f64 / total.max(1) as f64)
}

#[test]
fn healing_is_clinically_plausible() {
    let data = generate(&GenConfig::new(40, 3));
    let (tear_days, tear_healed) = healing_stats(&data, |w| w.etiology == Etiology::SkinTear);
    let (vlu_days, vlu_healed) = healing_stats(&data, |w| w.etiology == Etiology::VenousLegUlcer);
    let (_, dfu_clean) = healing_stats(&data, |w| {
        w.etiology == Etiology::DiabeticFootUlcer && !w.infected
    });
    let (_, dfu_infected) = healing_stats(&data, |w| w.etiology == Etiology::DiabeticFootUlcer && w.infected);
    assert!(tear_healed > 0.9, "skin tears nearly all heal: {tear_healed}");
    assert!(tear_days < 35.0, "skin tears heal within weeks: {tear_days}");
    assert!(
        vlu_days > 3.0 * tear_days,
        "venous ulcers heal slowly: {vlu_days} vs {tear_days}"
    );
    assert!(vlu_healed < tear_healed);
    assert!(
        dfu_infected < dfu_clean - 0.15,
        "infected DFUs stall: {dfu_infected} vs {dfu_clean}"
    );

    let diabetic = data.patients.iter().filter(|p| p.diabetes).count() as f64 / data.patients.len() as f64;
    assert!(
        (0.24..=0.36).contains(&diabetic),
        "diabetes prevalence {diabetic}"
    );
    let mut by_etiology: HashMap<Etiology, usize> = HashMap::new();
    for w in &data.wounds {
        *by_etiology.entry(w.etiology).or_default() += 1;
    }
    assert_eq!(by_etiology.len(), Etiology::ALL.len(), "every etiology occurs");
}

#[test]
fn trajectories_shrink_heal_and_respond_to_infection() {
    let data = generate(&GenConfig::new(20, 9));
    let visits = by_wound(&data);
    let tissue = |t: TissueType| TissueType::ALL.iter().position(|x| *x == t).unwrap() as f64;
    let (mut first_tissue, mut late_tissue, mut n) = (0.0, 0.0, 0.0);
    for w in data.wounds.iter().filter(|w| w.status == WoundStatus::Healed) {
        let list = &visits[&w.id];
        if list.len() < 4 {
            continue;
        }
        // Healers shrink: the second-to-last open visit is smaller than the first.
        let before_close = list[list.len() - 2];
        assert!(
            before_close.area_cm2 < list[0].area_cm2 * 1.6,
            "wound {} does not balloon",
            w.id
        );
        first_tissue += tissue(list[0].tissue_type);
        late_tissue += tissue(before_close.tissue_type);
        n += 1.0;
    }
    assert!(
        late_tissue / n > first_tissue / n + 0.5,
        "tissue improves: {} → {}",
        first_tissue / n,
        late_tissue / n
    );

    let mean = |f: &dyn Fn(&Assessment) -> bool, v: &dyn Fn(&Assessment) -> f64| {
        let xs: Vec<f64> = data.assessments.iter().filter(|a| f(a)).map(v).collect();
        xs.iter().sum::<f64>() / xs.len() as f64
    };
    let pain_inf = mean(&|a| a.infection_signs, &|a| f64::from(a.pain_score));
    let pain_clean = mean(&|a| !a.infection_signs && a.area_cm2 > 0.0, &|a| {
        f64::from(a.pain_score)
    });
    assert!(
        pain_inf > pain_clean + 1.0,
        "infection hurts: {pain_inf} vs {pain_clean}"
    );
    let exudate = |a: &Assessment| Exudate::ALL.iter().position(|x| *x == a.exudate).unwrap() as f64;
    let wet_inf = mean(&|a| a.infection_signs, &exudate);
    let wet_clean = mean(&|a| !a.infection_signs && a.area_cm2 > 0.0, &exudate);
    assert!(
        wet_inf > wet_clean + 0.4,
        "infection is wet: {wet_inf} vs {wet_clean}"
    );
    let slough_inf = mean(&|a| a.infection_signs, &|a| tissue(a.tissue_type));
    let slough_clean = mean(&|a| !a.infection_signs && a.area_cm2 > 0.0, &|a| {
        tissue(a.tissue_type)
    });
    assert!(
        slough_inf < slough_clean,
        "infection worsens the bed: {slough_inf} vs {slough_clean}"
    );
}

#[test]
fn the_anchor_date_bounds_every_date() {
    let anchor = NaiveDate::from_ymd_opt(2024, 2, 29).unwrap();
    let data = generate(&GenConfig {
        scale: 2,
        seed: 1,
        anchor,
    });
    assert!(data.assessments.iter().all(|a| a.assessed_on <= anchor));
    assert!(
        data.wounds
            .iter()
            .all(|w| w.onset_date <= anchor && w.healed_date.is_none_or(|h| h <= anchor))
    );
    assert!(data.patients.iter().all(|p| p.birth_date < anchor));
}

#[test]
fn counts_and_reports_read_well() {
    let counts = TableCounts {
        clinics: 12,
        clinicians: 96,
        patients: 2000,
        wounds: 5100,
        assessments: 118_432,
    };
    let report = SeedReport {
        counts,
        elapsed: Duration::from_millis(6_240),
    };
    assert_eq!(
        report.to_string(),
        "Seeded 12 clinics, 96 clinicians, 2,000 patients, 5,100 wounds, 118,432 assessments in 6.2 s"
    );
    assert_eq!(thousands(0), "0");
    assert_eq!(thousands(999), "999");
    assert_eq!(thousands(1_000), "1,000");
    assert_eq!(thousands(-1_234_567), "-1,234,567");
    assert!(TableCounts::default().is_empty());
}

#[test]
fn value_sets_round_trip_their_database_text() {
    for e in Etiology::ALL {
        assert_eq!(Etiology::parse(e.as_str()), Some(*e));
    }
    assert_eq!(PressureStage::parse("stage_3"), Some(PressureStage::Stage3));
    assert_eq!(Exudate::parse("bogus"), None);
}
