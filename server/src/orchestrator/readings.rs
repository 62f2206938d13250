//! The engine's readings kept per input (issue 17), and the allowed-values snapshot
//! shared by every request while the values are unchanged.
//!
//! The engine is pure: the same input gives the same reading. A clarification round
//! reads its question once and then once more per option (the plan each option leads
//! to, for its count), and the answer to that round reads it again with the answers,
//! then once more without them and once per option again (the badges of what was
//! chosen, with their counts). Most of those inputs repeat: the answer's option plans
//! are the round's, and a question asked again over the same values reads the same.
//! So each reading is kept under its whole input, written out with `Debug` (question,
//! date, thresholds, thread context, preferences, answers, the allowed values'
//! generation and whether the renderer's rules check the plan); a different input is a
//! different key, never a stale reading. At most `cap` readings and option plans are
//! kept (two generations of `cap / 2`: the older one is dropped when the newer fills);
//! `CLARION_READING_CACHE_CAP=0` turns this off.
//!
//! The engine itself builds a lookup of every allowed value on first use of a snapshot.
//! Building a snapshot per request paid for that lookup on every request, so the
//! snapshot is built once per set of loaded values and shared ([`SharedAllowed`]): the
//! same `Arc`s from the allowed-values cache give the same snapshot, already indexed.
//!
//! Pure bookkeeping: no I/O.

use crate::engine::{AllowedValuesSnapshot, EngineInput, PlanCheck, QueryPlan, Understanding, understand};
use crate::warehouse::ColumnValues;
use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;
use std::sync::{Arc, Mutex};

/// An allowed-values snapshot shared by the requests that saw the same values, with the
/// generation that tells it apart from every other snapshot of this process.
#[derive(Clone, Debug)]
pub(super) struct SharedAllowed {
    pub generation: u64,
    pub snapshot: Arc<AllowedValuesSnapshot>,
}

impl std::ops::Deref for SharedAllowed {
    type Target = AllowedValuesSnapshot;

    fn deref(&self) -> &AllowedValuesSnapshot {
        &self.snapshot
    }
}

/// The column values a snapshot was built from: `table.column`, the loaded list, truncated.
type Columns = Vec<(String, Arc<[String]>, bool)>;

/// The last snapshot built, with the column values it was built from.
#[derive(Default)]
pub(super) struct AllowedCache {
    last: Mutex<Option<(Columns, SharedAllowed)>>,
    generations: std::sync::atomic::AtomicU64,
}

impl AllowedCache {
    /// The snapshot of `columns` (the provider's values by `table.column`): the last one
    /// when every column is the same loaded list as then, otherwise `build`'s.
    pub fn get(
        &self,
        columns: &BTreeMap<String, ColumnValues>,
        build: impl FnOnce() -> AllowedValuesSnapshot,
    ) -> SharedAllowed {
        let same = |kept: &Columns| {
            kept.len() == columns.len()
                && kept
                    .iter()
                    .zip(columns)
                    .all(|((k, values, truncated), (key, now))| {
                        k == key && Arc::ptr_eq(values, &now.values) && *truncated == now.truncated
                    })
        };
        if let Some((kept, shared)) = &*self.lock()
            && same(kept)
        {
            return shared.clone();
        }
        let shared = self.fresh(build());
        let kept = columns
            .iter()
            .map(|(k, v)| (k.clone(), v.values.clone(), v.truncated))
            .collect();
        *self.lock() = Some((kept, shared.clone()));
        shared
    }

    /// A snapshot of its own generation, not kept (no database values to compare).
    pub fn fresh(&self, snapshot: AllowedValuesSnapshot) -> SharedAllowed {
        SharedAllowed {
            generation: self
                .generations
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                + 1,
            snapshot: Arc::new(snapshot),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<(Columns, SharedAllowed)>> {
        self.last.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A bounded map keeping the most recently stored entries: two generations, the older
/// dropped when the newer holds half the cap (an entry read from the older one moves to
/// the newer).
struct Generations<K, V> {
    half: usize,
    newer: HashMap<K, V>,
    older: HashMap<K, V>,
}

impl<K: Hash + Eq, V: Clone> Generations<K, V> {
    fn new(cap: usize) -> Self {
        Generations {
            half: cap.div_ceil(2),
            newer: HashMap::new(),
            older: HashMap::new(),
        }
    }

    fn get(&mut self, key: &K) -> Option<V>
    where
        K: Clone,
    {
        if let Some(v) = self.newer.get(key) {
            return Some(v.clone());
        }
        let (k, v) = self.older.remove_entry(key)?;
        self.put(k, v.clone());
        Some(v)
    }

    fn put(&mut self, key: K, value: V) {
        if self.half == 0 {
            return;
        }
        if self.newer.len() >= self.half && !self.newer.contains_key(&key) {
            self.older = std::mem::take(&mut self.newer);
        }
        self.newer.insert(key, value);
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.newer.len() + self.older.len()
    }
}

/// The engine's readings and option plans, kept per input (see the module doc).
pub(super) struct Readings {
    readings: Mutex<Generations<String, Arc<Understanding>>>,
    plans: Mutex<Generations<String, Option<Arc<QueryPlan>>>>,
}

impl Readings {
    /// At most `cap` readings and `cap` option plans; 0 keeps none.
    pub fn new(cap: usize) -> Self {
        Readings {
            readings: Mutex::new(Generations::new(cap)),
            plans: Mutex::new(Generations::new(cap)),
        }
    }

    /// `understand(input)`, kept under `input` when [`input_key`] can name it.
    pub fn understand(
        &self,
        input: &EngineInput<'_>,
        allowed: &SharedAllowed,
        check: &dyn PlanCheck,
    ) -> Arc<Understanding> {
        let Some(key) = input_key(input, allowed, check) else {
            return Arc::new(understand(input));
        };
        if let Some(u) = lock(&self.readings).get(&key) {
            return u;
        }
        let u = Arc::new(understand(input));
        lock(&self.readings).put(key, u.clone());
        u
    }

    /// The plan option `option_id` of ambiguity `ambiguity_id` leads to, computed by
    /// `plan` (the engine, with that option chosen) and kept under `input` and the ids.
    pub fn option_plan(
        &self,
        input: &EngineInput<'_>,
        allowed: &SharedAllowed,
        check: &dyn PlanCheck,
        ambiguity_id: &str,
        option_id: &str,
        plan: impl FnOnce() -> Option<QueryPlan>,
    ) -> Option<Arc<QueryPlan>> {
        let Some(mut key) = input_key(input, allowed, check) else {
            return plan().map(Arc::new);
        };
        key.push_str(&format!("\u{1f}{ambiguity_id:?}\u{1f}{option_id:?}"));
        if let Some(p) = lock(&self.plans).get(&key) {
            return p;
        }
        let p = plan().map(Arc::new);
        lock(&self.plans).put(key, p.clone());
        p
    }

    /// How many readings and option plans are kept (for the tests).
    #[cfg(test)]
    pub fn len(&self) -> (usize, usize) {
        (lock(&self.readings).len(), lock(&self.plans).len())
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The whole of `input` as a key, or `None` when part of it cannot be named: allowed
/// values other than `allowed`'s snapshot, or plan rules other than `check` (the
/// orchestrator's renderer rules). Every field is listed, so a field added to the
/// engine's input does not compile here until the key names it.
fn input_key(input: &EngineInput<'_>, allowed: &SharedAllowed, check: &dyn PlanCheck) -> Option<String> {
    let EngineInput {
        model: _,
        index: _,
        allowed: values,
        context,
        preferences,
        resolutions,
        question,
        today,
        thresholds,
        check: rules,
    } = *input;
    if !std::ptr::eq(values, &*allowed.snapshot) {
        return None;
    }
    let checked = match rules {
        None => false,
        Some(r) if std::ptr::addr_eq(r, check) => true,
        Some(_) => return None,
    };
    Some(format!(
        "{question:?}\u{1f}{today}\u{1f}{thresholds:?}\u{1f}{checked}\u{1f}{}\u{1f}{context:?}\u{1f}{preferences:?}\u{1f}{resolutions:?}",
        allowed.generation
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{ConversationContext, Preferences, Resolution, Resolutions};
    use crate::semantic::SemanticModel;
    use crate::sql::RenderCheck;

    fn today() -> chrono::NaiveDate {
        chrono::NaiveDate::from_ymd_opt(2026, 11, 1).unwrap()
    }

    #[test]
    fn a_kept_reading_is_the_engines_reading_of_the_same_input() {
        let model = SemanticModel::wound_care_shared();
        let cache = AllowedCache::default();
        let allowed = cache.fresh(AllowedValuesSnapshot::from_model_static(model));
        let check = RenderCheck { model };
        let readings = Readings::new(100);
        let first = EngineInput::new(model, "show me serious wounds", today())
            .with_allowed(&allowed)
            .with_check(&check);
        let a = readings.understand(&first, &allowed, &check);
        let b = readings.understand(&first, &allowed, &check);
        assert!(Arc::ptr_eq(&a, &b), "the second reading is the kept one");
        assert_eq!(*a, understand(&first));
        assert_eq!(readings.len().0, 1);
        // every part of the input is part of the key: each change is read afresh
        let amb = a.questions().next().expect("the question asks").clone();
        let answered = Resolutions::empty().with(
            amb.id.clone(),
            Resolution::Option {
                id: amb.options[0].id.clone(),
            },
        );
        let mut remembered = Preferences::empty();
        remembered
            .remembered
            .insert(amb.id.clone(), amb.options[1].id.clone());
        let context = ConversationContext::after(a.plan.clone().unwrap(), 1);
        let other_allowed = cache.fresh(AllowedValuesSnapshot::from_model_static(model));
        let inputs = [
            first.with_resolutions(&answered),
            first.with_preferences(&remembered),
            first.with_context(&context),
            EngineInput {
                question: "show me serious wounds at riverside",
                ..first
            },
            EngineInput {
                today: today().succ_opt().unwrap(),
                ..first
            },
            first.with_thresholds(crate::engine::GateThresholds { low: 0.1, high: 0.2 }),
            EngineInput { check: None, ..first },
        ];
        for (i, input) in inputs.iter().enumerate() {
            let kept = readings.understand(input, &allowed, &check);
            assert!(!Arc::ptr_eq(&kept, &a), "input {i} read as the first one");
            assert_eq!(*kept, understand(input), "input {i}");
        }
        assert_eq!(readings.len().0, 1 + inputs.len());
        // values or rules the key cannot name are read every time, never kept
        let other = first.with_allowed(&other_allowed);
        assert_eq!(*readings.understand(&other, &allowed, &check), understand(&other));
        let foreign = RenderCheck { model };
        let unnamed = first.with_check(&foreign);
        assert_eq!(
            *readings.understand(&unnamed, &allowed, &check),
            understand(&unnamed)
        );
        assert_eq!(readings.len().0, 1 + inputs.len());
    }

    #[test]
    fn option_plans_are_kept_per_input_and_option() {
        let model = SemanticModel::wound_care_shared();
        let allowed = AllowedCache::default().fresh(AllowedValuesSnapshot::from_model_static(model));
        let check = RenderCheck { model };
        let readings = Readings::new(100);
        let input = EngineInput::new(model, "show me serious wounds", today())
            .with_allowed(&allowed)
            .with_check(&check);
        let u = understand(&input);
        let amb = u.questions().next().expect("the question asks");
        for o in &amb.options {
            let want = crate::engine::option_plan(&input, &amb.id, &o.id);
            let mut ran = 0;
            for _ in 0..2 {
                let got = readings.option_plan(&input, &allowed, &check, &amb.id, &o.id, || {
                    ran += 1;
                    crate::engine::option_plan(&input, &amb.id, &o.id)
                });
                assert_eq!(got.as_deref(), want.as_ref(), "{}", o.id);
            }
            assert_eq!(ran, 1, "{}: computed once", o.id);
        }
        assert_eq!(readings.len().1, amb.options.len());
        // off: computed every time
        let off = Readings::new(0);
        let mut ran = 0;
        for _ in 0..2 {
            off.option_plan(&input, &allowed, &check, &amb.id, &amb.options[0].id, || {
                ran += 1;
                None
            });
        }
        assert_eq!((ran, off.len()), (2, (0, 0)));
    }

    #[test]
    fn the_cache_keeps_at_most_its_cap() {
        let mut g = Generations::new(4);
        for i in 0..10 {
            g.put(i, i);
            assert!(g.len() <= 4, "{}", g.len());
        }
        assert_eq!(g.get(&9), Some(9));
        assert_eq!(g.get(&0), None);
        // read from the older generation: kept on
        assert_eq!(g.get(&7), Some(7));
        g.put(10, 10);
        g.put(11, 11);
        assert_eq!(g.get(&7), Some(7));
    }

    #[test]
    fn the_same_loaded_values_share_one_snapshot() {
        use crate::warehouse::allowed_values::ValueSource;
        let model = SemanticModel::wound_care_shared();
        let cache = AllowedCache::default();
        let column = |values: Arc<[String]>, truncated| ColumnValues {
            values,
            source: ValueSource::Fresh,
            truncated,
        };
        let etiology: Arc<[String]> = Arc::from(vec!["arterial".to_owned(), "venous".to_owned()]);
        let mut columns = BTreeMap::from([("wounds.etiology".to_owned(), column(etiology.clone(), false))]);
        let mut built = 0;
        let mut build = |columns: &BTreeMap<String, ColumnValues>| {
            built += 1;
            AllowedValuesSnapshot::from_table_columns(
                model,
                columns
                    .iter()
                    .map(|(k, v)| (k.as_str(), &v.values[..], v.truncated)),
            )
        };
        let a = cache.get(&columns, || build(&columns));
        let b = cache.get(&columns, || build(&columns));
        assert!(Arc::ptr_eq(&a.snapshot, &b.snapshot));
        assert_eq!(a.generation, b.generation);
        // equal values loaded again, a truncation flag, another column: a new snapshot
        let again: Arc<[String]> = Arc::from(vec!["arterial".to_owned(), "venous".to_owned()]);
        columns.insert("wounds.etiology".into(), column(again.clone(), false));
        let c = cache.get(&columns, || build(&columns));
        assert!(!Arc::ptr_eq(&a.snapshot, &c.snapshot) && c.generation != a.generation);
        columns.insert("wounds.etiology".into(), column(again, true));
        let d = cache.get(&columns, || build(&columns));
        assert!(d.generation != c.generation);
        columns.insert(
            "clinics.name".into(),
            column(Arc::from(vec!["Riverside".to_owned()]), false),
        );
        let e = cache.get(&columns, || build(&columns));
        assert!(e.generation != d.generation);
        assert_eq!(built, 4);
        let want = AllowedValuesSnapshot::from_table_columns(
            model,
            columns
                .iter()
                .map(|(k, v)| (k.as_str(), &v.values[..], v.truncated)),
        );
        assert_eq!(
            e.snapshot.iter().collect::<Vec<_>>(),
            want.iter().collect::<Vec<_>>()
        );
    }
}
