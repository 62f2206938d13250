//! Row scope (issue 16): which rows of each entity a statement may read, applied by the
//! renderer to **every** table reference of a statement — the plan's own rows, the
//! parents it joins (`LEFT JOIN … ON … AND <scope>`), the related rows an `EXISTS`
//! filter, a count of related rows or a latest/first value reads (`patients.wound_count`
//! counts only the wounds in scope, `clinicians.assessment_count` only the assessments of
//! wounds in scope).
//!
//! The scope is typed: one [`Constraint`] per entity, over that entity (it may reach its
//! attribute through many-to-one joins: an assessment's clinic is its wound's). The
//! orchestrator builds it (`orchestrator::scope`); this module only renders it, with
//! every value bound. At a table reference aliased `a` of an entity whose constraint is
//! on its own row it renders the constraint on `a` (`"a"."clinic_id" IN ($1)`); one
//! reached through a join is rendered as a key set (`"a"."wound_id" IN (SELECT "w"."id"
//! FROM "wounds" AS "w" WHERE "w"."clinic_id" IN ($1))`), so it needs no join in the
//! enclosing statement and fits a correlated subquery as well as a `JOIN … ON`.
//!
//! An entity without a constraint under a limited scope cannot be read at all: the
//! statement is refused (fail closed), never rendered without it.
//!
//! Must not: decide what the scope is, read the database, or put a value into SQL text.

use std::collections::BTreeMap;

use super::expr::{Ctx, step_target};
use super::fragment::{Ident, Sql};
use super::predicate::{Pred, lower, render_leaf};
use super::render::RenderError;
use crate::semantic::{Constraint, JoinStep};

/// The rows a statement may read, per entity.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum RowScope {
    /// Every row of every entity.
    #[default]
    All,
    /// Only the rows of each entity meeting its constraint; an entity not listed may not
    /// be read.
    Limited(BTreeMap<String, Constraint>),
}

impl RowScope {
    /// A limited scope from (entity, constraint over that entity) pairs.
    pub fn limited(per_entity: impl IntoIterator<Item = (String, Constraint)>) -> Self {
        RowScope::Limited(per_entity.into_iter().collect())
    }

    /// The constraint on `entity`'s rows: `Ok(None)` when every row may be read, an error
    /// when none of its rows may be (no constraint under a limited scope).
    pub fn constraint(&self, entity: &str) -> Result<Option<&Constraint>, RenderError> {
        match self {
            RowScope::All => Ok(None),
            RowScope::Limited(m) => m.get(entity).map(Some).ok_or_else(|| RenderError::InvalidPlan {
                reason: format!("{entity} records have no clinic, so they cannot be limited to your clinics"),
            }),
        }
    }
}

/// The scope condition on the row of `entity` aliased `alias`, or `None` when every row
/// may be read.
pub(crate) fn condition(ctx: &mut Ctx<'_>, alias: &Ident, entity: &str) -> Result<Option<Sql>, RenderError> {
    let Some(c) = ctx.rows.constraint(entity)?.cloned() else {
        return Ok(None);
    };
    let pred = lower(ctx, entity, &c)?;
    render_at(ctx, alias, pred).map(Some)
}

/// Renders a lowered scope constraint on the row aliased `alias`: leaves on the row
/// itself directly, leaves on a parent as a key set of that parent's rows.
fn render_at(ctx: &mut Ctx<'_>, alias: &Ident, pred: Pred<'_>) -> Result<Sql, RenderError> {
    // every leaf on the same parent ("no clinic at all": its clinic is null and not
    // null): one key set of that parent's rows, whose condition is the whole predicate
    if !matches!(pred, Pred::Leaf { .. })
        && let Some(step) = shared_first_step(&pred).copied()
    {
        return parent_keys(ctx, alias, &step, strip_first(pred));
    }
    Ok(match pred {
        Pred::Leaf { route, leaf } => {
            let Some((step, rest)) = route.split_first() else {
                return render_leaf(ctx, alias, leaf);
            };
            let step = *step;
            let rest = Pred::Leaf {
                route: rest.to_vec(),
                leaf,
            };
            return parent_keys(ctx, alias, &step, rest);
        }
        Pred::And(ps) | Pred::Or(ps) if ps.is_empty() => {
            return Err(RenderError::InvalidPlan {
                reason: "a row scope must not be empty".into(),
            });
        }
        Pred::And(ps) => {
            let parts = ps
                .into_iter()
                .map(|p| render_at(ctx, alias, p))
                .collect::<Result<Vec<_>, _>>()?;
            Sql::join(parts, " AND ").parenthesized()
        }
        Pred::Or(ps) => {
            let parts = ps
                .into_iter()
                .map(|p| render_at(ctx, alias, p))
                .collect::<Result<Vec<_>, _>>()?;
            Sql::join(parts, " OR ").parenthesized()
        }
        Pred::Not(p) => {
            let mut s = Sql::text("NOT ");
            s.push_sql(render_at(ctx, alias, *p)?.parenthesized());
            s
        }
    })
}

/// `"alias"."fk" IN (SELECT "p"."key" FROM "parents" AS "p" WHERE <rest on p>)`: the row
/// whose parent through the many-to-one `step` meets `rest`.
fn parent_keys(
    ctx: &mut Ctx<'_>,
    alias: &Ident,
    step: &JoinStep<'_>,
    rest: Pred<'_>,
) -> Result<Sql, RenderError> {
    if !step.forward {
        return Err(RenderError::InvalidPlan {
            reason: "a row scope must reach its attribute through many-to-one joins".into(),
        });
    }
    let parent = ctx.entity(step_target(step))?;
    let p = ctx.fresh_alias(&parent.name)?;
    let fk = column_of(ctx, &step.join.from)?;
    let key = column_of(ctx, &step.join.to)?;
    let inner = render_at(ctx, &p, rest)?;
    let mut s = Sql::column(alias, &fk);
    s.push(" IN (SELECT ")
        .push_sql(Sql::column(&p, &key))
        .push(" FROM ")
        .push_ident(&ctx.table(parent)?)
        .push(" AS ")
        .push_ident(&p)
        .push(" WHERE ")
        .push_sql(inner)
        .push(")");
    Ok(s)
}

/// The first join step every leaf of `pred` takes, when they all take the same one.
fn shared_first_step<'a, 'm>(pred: &'a Pred<'m>) -> Option<&'a JoinStep<'m>> {
    match pred {
        Pred::Leaf { route, .. } => route.first(),
        Pred::Not(p) => shared_first_step(p),
        Pred::And(ps) | Pred::Or(ps) => {
            let first = shared_first_step(ps.first()?)?;
            ps.iter()
                .all(|p| {
                    shared_first_step(p)
                        .is_some_and(|s| std::ptr::eq(s.join, first.join) && s.forward == first.forward)
                })
                .then_some(first)
        }
    }
}

/// `pred` with the first step of every leaf's route dropped (moving to the parent).
fn strip_first(pred: Pred<'_>) -> Pred<'_> {
    match pred {
        Pred::Leaf { route, leaf } => Pred::Leaf {
            route: route[1..].to_vec(),
            leaf,
        },
        Pred::Not(p) => Pred::Not(Box::new(strip_first(*p))),
        Pred::And(ps) => Pred::And(ps.into_iter().map(strip_first).collect()),
        Pred::Or(ps) => Pred::Or(ps.into_iter().map(strip_first).collect()),
    }
}

/// The plain column behind a join attribute.
fn column_of(ctx: &Ctx<'_>, qualified: &str) -> Result<Ident, RenderError> {
    let attr = ctx.attribute(qualified)?;
    match &attr.attribute.column {
        Some(c) => Ident::new(c),
        None => Err(RenderError::NotAColumn {
            attribute: qualified.to_owned(),
        }),
    }
}

/// `cond AND scope`, or `cond` alone when every row may be read.
pub(crate) fn and_scope(
    ctx: &mut Ctx<'_>,
    mut cond: Sql,
    alias: &Ident,
    entity: &str,
) -> Result<Sql, RenderError> {
    if let Some(s) = condition(ctx, alias, entity)? {
        cond.push(" AND ").push_sql(s);
    }
    Ok(cond)
}
