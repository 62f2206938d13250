//! The generator is a pure function of its configuration: same seed, same rows;
//! another seed or anchor, other rows.

use server::dataset::{DEFAULT_ANCHOR, GenConfig, generate};

#[test]
fn two_runs_with_the_same_seed_produce_identical_rows() {
    let cfg = GenConfig::new(5, 31337);
    let (a, b) = (generate(&cfg), generate(&cfg));
    assert_eq!(a, b);
    assert!(a.assessments.len() > 1_000, "{}", a.assessments.len());
}

#[test]
fn a_different_seed_produces_different_rows() {
    let a = generate(&GenConfig::new(5, 1));
    let b = generate(&GenConfig::new(5, 2));
    assert_eq!(
        a.clinics.len(),
        b.clinics.len(),
        "the scale fixes the clinic count"
    );
    assert_eq!(
        a.patients.len(),
        b.patients.len(),
        "the scale fixes the patient count"
    );
    assert_ne!(a.clinicians, b.clinicians);
    assert_ne!(a.patients, b.patients);
    assert_ne!(a.wounds, b.wounds);
    assert_ne!(a.assessments, b.assessments);
}

#[test]
fn the_anchor_is_a_parameter_not_the_clock() {
    let default = generate(&GenConfig::new(2, 8));
    assert_eq!(GenConfig::new(2, 8).anchor, DEFAULT_ANCHOR);
    assert_eq!(DEFAULT_ANCHOR.to_string(), "2026-11-01");
    let earlier = chrono::NaiveDate::from_ymd_opt(2025, 6, 30).unwrap();
    let shifted = generate(&GenConfig {
        anchor: earlier,
        ..GenConfig::new(2, 8)
    });
    let latest = |d: &server::dataset::Dataset| d.assessments.iter().map(|a| a.assessed_on).max().unwrap();
    assert!(latest(&default) <= DEFAULT_ANCHOR);
    assert!(latest(&shifted) <= earlier);
    assert_ne!(default.assessments, shifted.assessments);
}
