//! The rows the generator produces and the value sets of their text columns.
//!
//! These mirror `migrations/*/0002_clinical.sql` column for column; the strings
//! returned by `as_str` are exactly the values stored in the database (and listed in
//! the migration comments). This module only describes data: no generation, no I/O.

use chrono::NaiveDate;

/// Declares a closed set of text values stored in one column.
macro_rules! value_set {
    ($(#[$meta:meta])* $name:ident { $($variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $($variant),+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The text stored in the database.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }

            /// The value whose database text is `text`.
            pub fn parse(text: &str) -> Option<Self> {
                Self::ALL.iter().copied().find(|v| v.as_str() == text)
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

value_set! {
    /// `clinics.care_setting`.
    CareSetting {
        HospitalOutpatient => "hospital_outpatient",
        Community => "community",
        LongTermCare => "long_term_care",
    }
}

value_set! {
    /// `clinicians.discipline`.
    Discipline {
        WoundNurse => "wound_nurse",
        Physician => "physician",
        Podiatrist => "podiatrist",
        VascularSurgeon => "vascular_surgeon",
    }
}

value_set! {
    /// `patients.sex`.
    Sex {
        Female => "female",
        Male => "male",
    }
}

value_set! {
    /// `patients.mobility`.
    Mobility {
        Independent => "independent",
        Assisted => "assisted",
        Wheelchair => "wheelchair",
        Bedbound => "bedbound",
    }
}

value_set! {
    /// `wounds.etiology`.
    Etiology {
        PressureInjury => "pressure_injury",
        DiabeticFootUlcer => "diabetic_foot_ulcer",
        VenousLegUlcer => "venous_leg_ulcer",
        ArterialLegUlcer => "arterial_leg_ulcer",
        Surgical => "surgical",
        SkinTear => "skin_tear",
        Burn => "burn",
        Trauma => "trauma",
    }
}

value_set! {
    /// `wounds.location`: the body site.
    Location {
        Sacrum => "sacrum",
        Heel => "heel",
        Hip => "hip",
        Ankle => "ankle",
        LowerLeg => "lower_leg",
        Foot => "foot",
        Toe => "toe",
        Abdomen => "abdomen",
        Chest => "chest",
        Back => "back",
        Arm => "arm",
        Hand => "hand",
        Head => "head",
    }
}

value_set! {
    /// `wounds.stage`: pressure injuries only (NPIAP staging).
    PressureStage {
        Stage1 => "stage_1",
        Stage2 => "stage_2",
        Stage3 => "stage_3",
        Stage4 => "stage_4",
        Unstageable => "unstageable",
        DeepTissue => "deep_tissue",
    }
}

value_set! {
    /// `wounds.depth`: tissue loss.
    Depth {
        Superficial => "superficial",
        PartialThickness => "partial_thickness",
        FullThickness => "full_thickness",
    }
}

value_set! {
    /// `wounds.status`.
    WoundStatus {
        Open => "open",
        Healed => "healed",
        Amputated => "amputated",
    }
}

value_set! {
    /// `assessments.exudate`: amount of drainage.
    Exudate {
        None => "none",
        Low => "low",
        Moderate => "moderate",
        High => "high",
    }
}

value_set! {
    /// `assessments.tissue_type`: the dominant tissue in the wound bed, worst first.
    TissueType {
        Necrotic => "necrotic",
        Slough => "slough",
        Granulation => "granulation",
        Epithelial => "epithelial",
    }
}

/// A row of `clinics`.
#[derive(Clone, Debug, PartialEq)]
pub struct Clinic {
    pub id: i64,
    pub name: String,
    pub region: &'static str,
    pub care_setting: CareSetting,
}

/// A row of `clinicians`.
#[derive(Clone, Debug, PartialEq)]
pub struct Clinician {
    pub id: i64,
    pub clinic_id: i64,
    pub name: String,
    pub discipline: Discipline,
}

/// A row of `patients`.
#[derive(Clone, Debug, PartialEq)]
pub struct Patient {
    pub id: i64,
    pub clinic_id: i64,
    pub mrn: String,
    pub full_name: String,
    pub sex: Sex,
    pub birth_date: NaiveDate,
    pub diabetes: bool,
    pub smoker: bool,
    pub mobility: Mobility,
    pub bmi: f64,
}

/// A row of `wounds`.
#[derive(Clone, Debug, PartialEq)]
pub struct Wound {
    pub id: i64,
    pub patient_id: i64,
    pub clinic_id: i64,
    pub etiology: Etiology,
    pub location: Location,
    /// `Some` exactly for pressure injuries.
    pub stage: Option<PressureStage>,
    pub depth: Depth,
    pub onset_date: NaiveDate,
    /// `Some` exactly when `status` is healed.
    pub healed_date: Option<NaiveDate>,
    pub status: WoundStatus,
    /// True exactly when at least one assessment shows infection signs.
    pub infected: bool,
    /// The area at the first assessment.
    pub initial_area_cm2: f64,
}

/// A row of `assessments`.
#[derive(Clone, Debug, PartialEq)]
pub struct Assessment {
    pub id: i64,
    pub wound_id: i64,
    pub clinician_id: i64,
    pub assessed_on: NaiveDate,
    pub length_cm: f64,
    pub width_cm: f64,
    pub depth_cm: f64,
    pub area_cm2: f64,
    pub pain_score: i32,
    pub exudate: Exudate,
    pub tissue_type: TissueType,
    pub infection_signs: bool,
}

/// A complete generated dataset, every table ordered by id (ids start at 1).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Dataset {
    pub clinics: Vec<Clinic>,
    pub clinicians: Vec<Clinician>,
    pub patients: Vec<Patient>,
    pub wounds: Vec<Wound>,
    pub assessments: Vec<Assessment>,
}
