//! Typed constraints → SQL predicates.
//!
//! [`lower`] checks a [`Constraint`] against the model (attribute exists, literal has
//! the attribute's type, unit matches, ordering only on numbers and dates) and turns
//! it into a [`Pred`] whose leaves carry the join route from the query's entity and
//! their values already typed for binding. Relative constraints (`time_window`,
//! `older_than`, `change`, `related_count … within`) get their cut-off dates computed
//! here from the plan's `today`; they are bound, never the database clock.
//!
//! [`render_conjunction`] places each leaf: along many-to-one routes it is joined in
//! the current scope; across a one-to-many step it goes into `EXISTS (…)`, and the
//! members of one conjunction that cross the same step share one `EXISTS` — so they
//! must hold on the same related row, as the model's `Constraint` documentation says.
//! A negation that crosses a one-to-many step means "no related row matches"
//! (`NOT EXISTS`), and an `any` of a single member is placed on related rows of its own
//! (`EXISTS` of its own: "both a DFU and an arterial ulcer" are two wounds). This module must not put a literal into SQL text.

use chrono::NaiveDate;

use super::dialect::date_minus;
use super::expr::{Ctx, Scope, count_related, default_date, first_fan_out, pick_related, step_target};
use super::fragment::{BoundValue, Ident, Sql};
use super::render::RenderError;
use crate::semantic::{
    AttributeRef, AttributeRole, AttributeType, CompareOp, Constraint, Entity, JoinStep, Span, Value,
};

/// A lowered constraint.
#[derive(Clone, Debug)]
pub(crate) enum Pred<'m> {
    /// A condition on the entity at the end of `route` (from the scope's anchor).
    Leaf {
        route: Vec<JoinStep<'m>>,
        leaf: Leaf<'m>,
    },
    And(Vec<Pred<'m>>),
    Or(Vec<Pred<'m>>),
    Not(Box<Pred<'m>>),
}

/// A condition on one row of one entity.
#[derive(Clone, Debug)]
pub(crate) enum Leaf<'m> {
    Compare {
        attr: AttributeRef<'m>,
        op: CompareOp,
        value: BoundValue,
    },
    Between {
        attr: AttributeRef<'m>,
        min: BoundValue,
        max: BoundValue,
    },
    InSet {
        attr: AttributeRef<'m>,
        values: Vec<BoundValue>,
    },
    Null {
        attr: AttributeRef<'m>,
        negated: bool,
    },
    /// Relative change of `attr` on rows related through `path`, dated by `date`.
    Change {
        path: Vec<JoinStep<'m>>,
        attr: AttributeRef<'m>,
        date: AttributeRef<'m>,
        start: NaiveDate,
        op: CompareOp,
        pct: f64,
    },
    /// Number of rows related through `path`, optionally dated within a window and
    /// matching a condition on their own attributes.
    RelatedCount {
        path: Vec<JoinStep<'m>>,
        window: Option<(AttributeRef<'m>, NaiveDate)>,
        condition: Option<Box<Pred<'m>>>,
        op: CompareOp,
        value: u32,
    },
}

/// SQL for a comparison operator.
pub(crate) fn op_sql(op: CompareOp) -> &'static str {
    match op {
        CompareOp::Gt => " > ",
        CompareOp::Gte => " >= ",
        CompareOp::Lt => " < ",
        CompareOp::Lte => " <= ",
        CompareOp::Eq => " = ",
        CompareOp::Ne => " <> ",
    }
}

/// Lowers `constraint` for a query over `base`.
pub(crate) fn lower<'m>(ctx: &Ctx<'m>, base: &str, constraint: &Constraint) -> Result<Pred<'m>, RenderError> {
    let leaf_on = |attr: AttributeRef<'m>, leaf: Leaf<'m>| -> Result<Pred<'m>, RenderError> {
        Ok(Pred::Leaf {
            route: ctx.join_path(base, &attr.entity.name)?,
            leaf,
        })
    };
    match constraint {
        Constraint::Compare {
            attribute,
            op: op @ (CompareOp::Eq | CompareOp::Ne),
            value: value @ Value::Text(_),
            ..
        } if referenced_label(ctx, attribute)?.is_some() => {
            let (route, label) = referenced_route(ctx, base, attribute)?;
            let value = coerce(label, value)?;
            Ok(Pred::Leaf {
                route,
                leaf: Leaf::Compare {
                    attr: label,
                    op: *op,
                    value,
                },
            })
        }
        Constraint::InSet { attribute, values }
            if referenced_label(ctx, attribute)?.is_some()
                && values.iter().all(|v| matches!(v, Value::Text(_))) =>
        {
            let (route, label) = referenced_route(ctx, base, attribute)?;
            if values.is_empty() {
                return Err(RenderError::EmptySet {
                    attribute: attribute.clone(),
                });
            }
            let values = values
                .iter()
                .map(|v| coerce(label, v))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(Pred::Leaf {
                route,
                leaf: Leaf::InSet { attr: label, values },
            })
        }
        Constraint::Compare {
            attribute,
            op,
            value,
            unit,
        } => {
            let attr = ctx.attribute(attribute)?;
            check_unit(attr, unit.as_deref())?;
            if op.is_ordering() {
                check_ordered(attr)?;
            }
            let value = coerce(attr, value)?;
            leaf_on(attr, Leaf::Compare { attr, op: *op, value })
        }
        Constraint::Between {
            attribute,
            min,
            max,
            unit,
        } => {
            let attr = ctx.attribute(attribute)?;
            check_unit(attr, unit.as_deref())?;
            check_ordered(attr)?;
            let (min, max) = (coerce(attr, min)?, coerce(attr, max)?);
            leaf_on(attr, Leaf::Between { attr, min, max })
        }
        Constraint::InSet { attribute, values } => {
            let attr = ctx.attribute(attribute)?;
            if values.is_empty() {
                return Err(RenderError::EmptySet {
                    attribute: attribute.clone(),
                });
            }
            let values = values
                .iter()
                .map(|v| coerce(attr, v))
                .collect::<Result<Vec<_>, _>>()?;
            leaf_on(attr, Leaf::InSet { attr, values })
        }
        Constraint::IsNull { attribute } | Constraint::NotNull { attribute } => {
            let attr = ctx.attribute(attribute)?;
            let negated = matches!(constraint, Constraint::NotNull { .. });
            leaf_on(attr, Leaf::Null { attr, negated })
        }
        Constraint::TimeWindow { dimension, last } => {
            let attr = time_attribute(ctx, base, dimension.as_deref())?;
            let start = cutoff(ctx.today, *last)?;
            let route = ctx.join_path(base, &attr.entity.name)?;
            Ok(Pred::And(vec![
                Pred::Leaf {
                    route: route.clone(),
                    leaf: Leaf::Compare {
                        attr,
                        op: CompareOp::Gte,
                        value: BoundValue::Date(start),
                    },
                },
                Pred::Leaf {
                    route,
                    leaf: Leaf::Compare {
                        attr,
                        op: CompareOp::Lte,
                        value: BoundValue::Date(ctx.today),
                    },
                },
            ]))
        }
        Constraint::OlderThan { dimension, age } => {
            let attr = time_attribute(ctx, base, dimension.as_deref())?;
            let before = cutoff(ctx.today, *age)?;
            leaf_on(
                attr,
                Leaf::Compare {
                    attr,
                    op: CompareOp::Lt,
                    value: BoundValue::Date(before),
                },
            )
        }
        Constraint::Change {
            attribute,
            per,
            over,
            op,
            pct,
        } => {
            let attr = ctx.attribute(attribute)?;
            if !attr.attribute.ty.is_numeric() {
                return Err(RenderError::TypeMismatch {
                    attribute: attribute.clone(),
                    expected: AttributeType::Real,
                    found: attr.attribute.ty.as_str(),
                });
            }
            if !pct.is_finite() {
                return Err(RenderError::BadNumber {
                    attribute: attribute.clone(),
                });
            }
            let per_entity = ctx.entity(per)?;
            let path = related_path(ctx, per_entity, &attr.entity.name)?;
            let date = default_date(ctx, &attr.entity.name)?;
            if date.entity.name != attr.entity.name {
                return Err(RenderError::NoTimeDimension {
                    entity: attr.entity.name.clone(),
                });
            }
            let start = cutoff(ctx.today, *over)?;
            Ok(Pred::Leaf {
                route: ctx.join_path(base, per)?,
                leaf: Leaf::Change {
                    path,
                    attr,
                    date,
                    start,
                    op: *op,
                    pct: *pct,
                },
            })
        }
        Constraint::RelatedCount {
            per,
            related,
            op,
            value,
            within,
            condition,
        } => {
            let per = per.as_deref().unwrap_or(base);
            let per_entity = ctx.entity(per)?;
            let path = related_path(ctx, per_entity, related)?;
            let window = match within {
                Some(span) => Some((default_date(ctx, related)?, cutoff(ctx.today, *span)?)),
                None => None,
            };
            let condition = match condition {
                Some(c) => {
                    let pred = lower(ctx, related, c)?;
                    if !local(&pred) {
                        return Err(RenderError::InvalidPlan {
                            reason: format!(
                                "the condition of a count of {related} must be on their own attributes"
                            ),
                        });
                    }
                    Some(Box::new(pred))
                }
                None => None,
            };
            Ok(Pred::Leaf {
                route: ctx.join_path(base, per)?,
                leaf: Leaf::RelatedCount {
                    path,
                    window,
                    condition,
                    op: *op,
                    value: *value,
                },
            })
        }
        Constraint::All { of } => Ok(Pred::And(
            of.iter().map(|c| lower(ctx, base, c)).collect::<Result<_, _>>()?,
        )),
        Constraint::Any { of } => Ok(Pred::Or(
            of.iter().map(|c| lower(ctx, base, c)).collect::<Result<_, _>>()?,
        )),
        Constraint::Not { of } => Ok(Pred::Not(Box::new(lower(ctx, base, of)?))),
    }
}

/// A foreign key compared with text names the referenced record by its label:
/// `patients.clinic_id = 'Harborview Care Home'` is the patient's (registered) clinic
/// named so, reached through that reference and no other. The referenced entity's label
/// attribute, when the attribute is a foreign key of a join and that entity has one.
fn referenced_label<'m>(ctx: &Ctx<'m>, attribute: &str) -> Result<Option<AttributeRef<'m>>, RenderError> {
    let attr = ctx.attribute(attribute)?;
    if attr.attribute.role != AttributeRole::ForeignKey {
        return Ok(None);
    }
    let Some(join) = ctx.model.joins.iter().find(|j| j.from == attribute) else {
        return Ok(None);
    };
    let target = ctx.entity(join.to_entity())?;
    Ok(target
        .attributes
        .iter()
        .find(|a| a.role == AttributeRole::Label && a.ty == AttributeType::Text)
        .map(|a| AttributeRef {
            entity: target,
            attribute: a,
        }))
}

/// The route from `base` to the record a foreign key references (through that key), and
/// the referenced entity's label.
fn referenced_route<'m>(
    ctx: &Ctx<'m>,
    base: &str,
    attribute: &str,
) -> Result<(Vec<JoinStep<'m>>, AttributeRef<'m>), RenderError> {
    let attr = ctx.attribute(attribute)?;
    let label = referenced_label(ctx, attribute)?.ok_or_else(|| RenderError::InvalidPlan {
        reason: format!("{attribute} names no record by a label"),
    })?;
    let join = ctx
        .model
        .joins
        .iter()
        .find(|j| j.from == attribute)
        .ok_or_else(|| RenderError::InvalidPlan {
            reason: format!("{attribute} is no reference"),
        })?;
    let mut route = ctx.join_path(base, &attr.entity.name)?;
    route.push(JoinStep { join, forward: true });
    Ok((route, label))
}

/// True when every leaf of `pred` is on the anchor row itself (no join).
fn local(pred: &Pred<'_>) -> bool {
    match pred {
        Pred::Leaf { route, .. } => route.is_empty(),
        Pred::And(ps) | Pred::Or(ps) => ps.iter().all(local),
        Pred::Not(p) => local(p),
    }
}

/// Renders a predicate whose leaves are all on the row aliased `row`.
fn render_local(ctx: &mut Ctx<'_>, row: &Ident, pred: Pred<'_>) -> Result<Sql, RenderError> {
    Ok(match pred {
        Pred::Leaf { leaf, .. } => render_leaf(ctx, row, leaf)?,
        Pred::And(ps) => {
            let parts = ps
                .into_iter()
                .map(|p| render_local(ctx, row, p))
                .collect::<Result<Vec<_>, _>>()?;
            and_all(ctx, parts).parenthesized()
        }
        Pred::Or(ps) => {
            let parts = ps
                .into_iter()
                .map(|p| render_local(ctx, row, p))
                .collect::<Result<Vec<_>, _>>()?;
            Sql::join(parts, " OR ").parenthesized()
        }
        Pred::Not(p) => {
            let mut s = Sql::text("NOT ");
            s.push_sql(render_local(ctx, row, *p)?.parenthesized());
            s
        }
    })
}

/// The join path from `per` to another entity, which must be a different entity.
fn related_path<'m>(ctx: &Ctx<'m>, per: &Entity, related: &str) -> Result<Vec<JoinStep<'m>>, RenderError> {
    let path = ctx.join_path(&per.name, related)?;
    if path.is_empty() {
        return Err(RenderError::InvalidPlan {
            reason: format!("{related} is not related to itself"),
        });
    }
    Ok(path)
}

/// The date attribute a time constraint applies to: the named time dimension, or the
/// query entity's default.
pub(crate) fn time_attribute<'m>(
    ctx: &Ctx<'m>,
    base: &str,
    dimension: Option<&str>,
) -> Result<AttributeRef<'m>, RenderError> {
    let attr = match dimension {
        Some(name) => {
            let dim = ctx
                .model
                .time_dimension(name)
                .ok_or_else(|| RenderError::UnknownTimeDimension {
                    name: name.to_owned(),
                })?;
            ctx.attribute(&dim.attribute)?
        }
        None => default_date(ctx, base)?,
    };
    require_type(attr, AttributeType::Date)?;
    Ok(attr)
}

fn cutoff(today: NaiveDate, span: Span) -> Result<NaiveDate, RenderError> {
    date_minus(today, span).ok_or(RenderError::DateOutOfRange)
}

pub(crate) fn require_type(attr: AttributeRef<'_>, ty: AttributeType) -> Result<(), RenderError> {
    if attr.attribute.ty == ty {
        Ok(())
    } else {
        Err(RenderError::TypeMismatch {
            attribute: attr.qualified(),
            expected: ty,
            found: attr.attribute.ty.as_str(),
        })
    }
}

fn check_ordered(attr: AttributeRef<'_>) -> Result<(), RenderError> {
    // Text order differs between backends' collations; booleans have none.
    if attr.attribute.ty.is_ordered() {
        Ok(())
    } else {
        Err(RenderError::NotOrdered {
            attribute: attr.qualified(),
        })
    }
}

fn check_unit(attr: AttributeRef<'_>, unit: Option<&str>) -> Result<(), RenderError> {
    match (unit, attr.attribute.unit.as_deref()) {
        (Some(given), Some(own)) if given != own => Err(RenderError::UnitMismatch {
            attribute: attr.qualified(),
            expected: own.to_owned(),
            found: given.to_owned(),
        }),
        _ => Ok(()),
    }
}

/// A literal as a value of the attribute's type.
pub(crate) fn coerce(attr: AttributeRef<'_>, value: &Value) -> Result<BoundValue, RenderError> {
    let mismatch = || RenderError::TypeMismatch {
        attribute: attr.qualified(),
        expected: attr.attribute.ty,
        found: value.kind_name(),
    };
    let finite = |r: f64| {
        if r.is_finite() {
            Ok(r)
        } else {
            Err(RenderError::BadNumber {
                attribute: attr.qualified(),
            })
        }
    };
    match (attr.attribute.ty, value) {
        (AttributeType::Text, Value::Text(s)) => Ok(BoundValue::Text(s.clone())),
        (AttributeType::Integer, Value::Integer(i)) => Ok(BoundValue::Int(*i)),
        (AttributeType::Integer, Value::Real(r)) => Ok(BoundValue::Real(finite(*r)?)),
        (AttributeType::Real, Value::Integer(i)) => Ok(BoundValue::Real(*i as f64)),
        (AttributeType::Real, Value::Real(r)) => Ok(BoundValue::Real(finite(*r)?)),
        (AttributeType::Boolean, Value::Bool(b)) => Ok(BoundValue::Bool(*b)),
        (AttributeType::Date, Value::Text(s)) => NaiveDate::parse_from_str(s, "%Y-%m-%d")
            .map(BoundValue::Date)
            .map_err(|_| RenderError::BadDate {
                attribute: attr.qualified(),
                value: s.clone(),
            }),
        _ => Err(mismatch()),
    }
}

/// Where a predicate's one-to-many step lies: the route up to and including it.
type GroupKey<'m> = Vec<JoinStep<'m>>;

fn same_route(a: &[JoinStep<'_>], b: &[JoinStep<'_>]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| std::ptr::eq(x.join, y.join) && x.forward == y.forward)
}

/// The shared route to the first one-to-many step, when every leaf of `pred` crosses
/// the same one (negations never share: they mean "no related row").
fn group_key<'m>(pred: &Pred<'m>) -> Option<GroupKey<'m>> {
    match pred {
        Pred::Leaf { route, .. } => first_fan_out(route).map(|k| route[..=k].to_vec()),
        Pred::Not(_) => None,
        // an `any` of one member holds on related rows of its own ("both a DFU and an
        // arterial ulcer": two wounds, not one wound that is both)
        Pred::Or(ps) if ps.len() == 1 => None,
        Pred::And(ps) | Pred::Or(ps) => {
            let mut keys = ps.iter().map(group_key);
            let first = keys.next()??;
            keys.all(|k| k.is_some_and(|k| same_route(&k, &first)))
                .then_some(first)
        }
    }
}

/// Drops the first `n` steps of every leaf's route (moving into a subquery).
fn strip<'m>(pred: Pred<'m>, n: usize) -> Pred<'m> {
    match pred {
        Pred::Leaf { route, leaf } => Pred::Leaf {
            route: route[n..].to_vec(),
            leaf,
        },
        Pred::And(ps) => Pred::And(ps.into_iter().map(|p| strip(p, n)).collect()),
        Pred::Or(ps) => Pred::Or(ps.into_iter().map(|p| strip(p, n)).collect()),
        Pred::Not(p) => Pred::Not(Box::new(strip(*p, n))),
    }
}

fn flatten<'m>(preds: Vec<Pred<'m>>, out: &mut Vec<Pred<'m>>) {
    for p in preds {
        match p {
            Pred::And(ps) => flatten(ps, out),
            other => out.push(other),
        }
    }
}

/// The many-to-one routes a conjunction only holds on when the row at their end is
/// matched (see `Scope::require`): its top-level leaves that compare a plain column
/// with a value, or require it not null. Each is false or unknown on a null-extended
/// row; a derived attribute (`COALESCE`, a sub-select) may not be, nor may a leaf under
/// `OR` or `NOT`.
pub(crate) fn null_rejecting_routes<'a, 'm>(preds: &'a [Pred<'m>], out: &mut Vec<&'a [JoinStep<'m>]>) {
    for p in preds {
        match p {
            Pred::And(ps) => null_rejecting_routes(ps, out),
            Pred::Leaf { route, leaf } => {
                let rejects = match leaf {
                    Leaf::Compare { attr, .. } | Leaf::Between { attr, .. } | Leaf::InSet { attr, .. } => {
                        attr.attribute.column.is_some()
                    }
                    Leaf::Null { attr, negated } => *negated && attr.attribute.column.is_some(),
                    Leaf::Change { .. } | Leaf::RelatedCount { .. } => false,
                };
                if rejects && !route.is_empty() && first_fan_out(route).is_none() {
                    out.push(route);
                }
            }
            Pred::Or(_) | Pred::Not(_) => {}
        }
    }
}

enum Slot {
    Done(Sql),
    Group(usize),
}

/// Renders a conjunction in `scope`: one SQL condition per returned item, all of
/// which must hold.
pub(crate) fn render_conjunction<'m>(
    ctx: &mut Ctx<'m>,
    scope: &mut Scope,
    preds: Vec<Pred<'m>>,
) -> Result<Vec<Sql>, RenderError> {
    let mut flat = Vec::new();
    flatten(preds, &mut flat);
    let mut slots = Vec::new();
    let mut groups: Vec<(GroupKey<'m>, Vec<Pred<'m>>)> = Vec::new();
    for pred in flat {
        if let Some(key) = group_key(&pred) {
            let n = key.len();
            let stripped = strip(pred, n);
            match groups.iter_mut().position(|(k, _)| same_route(k, &key)) {
                Some(i) => groups[i].1.push(stripped),
                None => {
                    slots.push(Slot::Group(groups.len()));
                    groups.push((key, vec![stripped]));
                }
            }
            continue;
        }
        let sql = match pred {
            Pred::Leaf { route, leaf } => {
                let alias = scope.alias_for(ctx, &route)?;
                render_leaf(ctx, &alias, leaf)?
            }
            Pred::Or(ps) => {
                if ps.is_empty() {
                    Sql::text(ctx.dialect.bool_literal(false))
                } else {
                    let mut parts = Vec::new();
                    for p in ps {
                        let conds = render_conjunction(ctx, scope, vec![p])?;
                        parts.push(and_all(ctx, conds));
                    }
                    Sql::join(parts, " OR ").parenthesized()
                }
            }
            Pred::Not(p) => {
                let conds = render_conjunction(ctx, scope, vec![*p])?;
                let inner = and_all(ctx, conds);
                let mut s = Sql::text("NOT ");
                s.push_sql(inner.parenthesized());
                s
            }
            Pred::And(_) => unreachable!("flattened above"),
        };
        slots.push(Slot::Done(sql));
    }
    let mut rendered_groups = Vec::with_capacity(groups.len());
    for (key, members) in groups {
        rendered_groups.push(Some(render_exists(ctx, scope, &key, members)?));
    }
    Ok(slots
        .into_iter()
        .map(|slot| match slot {
            Slot::Done(sql) => sql,
            Slot::Group(i) => rendered_groups[i].take().expect("each group rendered once"),
        })
        .collect())
}

/// `a AND b AND …`, or the dialect's true when empty.
pub(crate) fn and_all(ctx: &Ctx<'_>, conds: Vec<Sql>) -> Sql {
    match conds.len() {
        0 => Sql::text(ctx.dialect.bool_literal(true)),
        1 => conds.into_iter().next().expect("one condition"),
        _ => Sql::join(conds, " AND ").parenthesized(),
    }
}

/// `EXISTS (SELECT 1 FROM child … WHERE child.fk = parent.key AND members…)`.
fn render_exists<'m>(
    ctx: &mut Ctx<'m>,
    outer: &mut Scope,
    key: &[JoinStep<'m>],
    members: Vec<Pred<'m>>,
) -> Result<Sql, RenderError> {
    let (step, prefix) = key
        .split_last()
        .expect("a group key ends with its one-to-many step");
    let parent = outer.alias_for(ctx, prefix)?;
    let child = ctx.entity(step_target(step))?;
    let alias = ctx.fresh_alias(&child.name)?;
    let mut sub = Scope::sub(&child.name, alias.clone());
    let conds = render_conjunction(ctx, &mut sub, members)?;
    let mut s = Sql::text("EXISTS (SELECT 1 FROM ");
    s.push_ident(&ctx.table(child)?)
        .push(" AS ")
        .push_ident(&alias)
        .push_sql(sub.join_clauses());
    // a related row outside the row scope does not make the filter hold
    let on = ctx.join_condition(step.join, &alias, &parent)?;
    let on = super::scope::and_scope(ctx, on, &alias, &child.name)?;
    s.push(" WHERE ").push_sql(on);
    for c in conds {
        s.push(" AND ").push_sql(c);
    }
    s.push(")");
    Ok(s)
}

/// One leaf on the row aliased `alias`.
pub(crate) fn render_leaf(ctx: &mut Ctx<'_>, alias: &Ident, leaf: Leaf<'_>) -> Result<Sql, RenderError> {
    use super::expr::attr_expr;
    let mut s = Sql::new();
    match leaf {
        Leaf::Compare { attr, op, value } => {
            s.push_sql(attr_expr(ctx, alias, attr)?)
                .push(op_sql(op))
                .push_param(value);
        }
        Leaf::Between { attr, min, max } => {
            s.push_sql(attr_expr(ctx, alias, attr)?)
                .push(" BETWEEN ")
                .push_param(min)
                .push(" AND ")
                .push_param(max);
        }
        Leaf::InSet { attr, values } => {
            s.push_sql(attr_expr(ctx, alias, attr)?).push(" IN (");
            for (i, v) in values.into_iter().enumerate() {
                if i > 0 {
                    s.push(", ");
                }
                s.push_param(v);
            }
            s.push(")");
        }
        Leaf::Null { attr, negated } => {
            s.push_sql(attr_expr(ctx, alias, attr)?)
                .push(if negated { " IS NOT NULL" } else { " IS NULL" });
        }
        Leaf::Change {
            path,
            attr,
            date,
            start,
            op,
            pct,
        } => {
            let today = ctx.today;
            let current = pick_related(ctx, alias, &path, attr, date, true, Some(today), 0)?;
            let baseline = pick_related(ctx, alias, &path, attr, date, true, Some(start), 0)?;
            s.push("((")
                .push_sql(current)
                .push(" - ")
                .push_sql(baseline.clone())
                .push(") * 100.0 / NULLIF(");
            s.push_sql(baseline)
                .push(", 0))")
                .push(op_sql(op))
                .push_param(BoundValue::Real(pct));
        }
        Leaf::RelatedCount {
            path,
            window,
            condition,
            op,
            value,
        } => {
            let mut on_row = |ctx: &mut Ctx<'_>, row: &Ident| match &condition {
                Some(p) => render_local(ctx, row, (**p).clone()).map(Some),
                None => Ok(None),
            };
            s.push_sql(count_related(ctx, alias, &path, window, &mut on_row)?)
                .push(op_sql(op));
            s.push_param(BoundValue::Int(i64::from(value)));
        }
    }
    Ok(s)
}
