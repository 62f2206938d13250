//! Attribute expressions and join scopes: how a model name becomes a column
//! reference, a join, or a correlated subquery.
//!
//! A [`Scope`] is one `SELECT` level: an anchor entity with its alias and the
//! many-to-one joins added to reach other entities from it (left joins at the top
//! level, inner joins inside `EXISTS`). [`attr_expr`] renders an attribute of an
//! aliased entity: a plain column, or a derived attribute as a typed expression
//! (`days_between` / `years_between` with the bound `today`, `latest` / `first` as a
//! correlated subquery ordered by its date with the key as tie-break, `count_related`
//! as a correlated `COUNT`, `percent_change`). Identifiers come only from the model
//! and are validated; values are only ever bound. This module must not read the
//! database clock or build SQL from text it was given.

use chrono::NaiveDate;

use super::dialect::Dialect;
use super::fragment::{BoundValue, Ident, Sql};
use super::render::RenderError;
use crate::semantic::{
    AttributeRef, AttributeType, DateOperand, Derived, Entity, Join, JoinStep, SemanticModel, split_qualified,
};

/// How deep derived attributes may refer to other derived attributes.
const MAX_DERIVATION_DEPTH: usize = 8;

/// Everything rendering needs besides the plan: model, dialect, `today`, alias counter.
pub(crate) struct Ctx<'m> {
    pub model: &'m SemanticModel,
    pub dialect: Dialect,
    pub today: NaiveDate,
    /// Summary tables found current by the warehouse (`super::summary`).
    pub summaries: super::summary::SummaryUse,
    /// The rows every table reference may read (`super::scope`).
    pub rows: super::scope::RowScope,
    next_alias: u32,
}

impl<'m> Ctx<'m> {
    pub(crate) fn new(model: &'m SemanticModel, dialect: Dialect, today: NaiveDate) -> Self {
        Ctx {
            model,
            dialect,
            today,
            summaries: super::summary::SummaryUse::LIVE,
            rows: super::scope::RowScope::All,
            next_alias: 0,
        }
    }

    /// A new alias for a subquery table: `{entity}_{n}`.
    pub(crate) fn fresh_alias(&mut self, entity: &str) -> Result<Ident, RenderError> {
        self.next_alias += 1;
        Ident::new(&format!("{entity}_{}", self.next_alias))
    }

    pub(crate) fn entity(&self, name: &str) -> Result<&'m Entity, RenderError> {
        self.model.entity(name).ok_or_else(|| RenderError::UnknownEntity {
            entity: name.to_owned(),
        })
    }

    pub(crate) fn attribute(&self, qualified: &str) -> Result<AttributeRef<'m>, RenderError> {
        self.model
            .attribute(qualified)
            .ok_or_else(|| RenderError::UnknownAttribute {
                attribute: qualified.to_owned(),
            })
    }

    /// An attribute of `entity` named without its entity (`onset_date`), or qualified.
    pub(crate) fn local_attribute(
        &self,
        entity: &Entity,
        name: &str,
    ) -> Result<AttributeRef<'m>, RenderError> {
        if split_qualified(name).is_some() {
            self.attribute(name)
        } else {
            self.attribute(&format!("{}.{name}", entity.name))
        }
    }

    pub(crate) fn table(&self, entity: &Entity) -> Result<Ident, RenderError> {
        Ident::new(&entity.table)
    }

    /// The shortest join path between two entities (empty when they are the same).
    pub(crate) fn join_path(&self, from: &str, to: &str) -> Result<Vec<JoinStep<'m>>, RenderError> {
        self.entity(from)?;
        self.entity(to)?;
        self.model
            .join_path(from, to)
            .ok_or_else(|| RenderError::NoJoinPath {
                from: from.to_owned(),
                to: to.to_owned(),
            })
    }

    /// The plain column behind a join's attribute.
    fn join_column(&self, qualified: &str) -> Result<Ident, RenderError> {
        let attr = self.attribute(qualified)?;
        match &attr.attribute.column {
            Some(c) => Ident::new(c),
            None => Err(RenderError::NotAColumn {
                attribute: qualified.to_owned(),
            }),
        }
    }

    /// `"from_alias"."fk" = "to_alias"."key"` for a join.
    pub(crate) fn join_condition(
        &self,
        join: &Join,
        from_alias: &Ident,
        to_alias: &Ident,
    ) -> Result<Sql, RenderError> {
        let mut s = Sql::column(from_alias, &self.join_column(&join.from)?);
        s.push(" = ")
            .push_sql(Sql::column(to_alias, &self.join_column(&join.to)?));
        Ok(s)
    }

    /// The bound date the plan calls today.
    pub(crate) fn today_param(&self) -> Sql {
        Sql::param(BoundValue::Date(self.today))
    }

    /// The primary-key column of an entity.
    pub(crate) fn key_column(&self, entity: &Entity) -> Result<Ident, RenderError> {
        let key = self.local_attribute(entity, &entity.key)?;
        match &key.attribute.column {
            Some(c) => Ident::new(c),
            None => Err(RenderError::NotAColumn {
                attribute: key.qualified(),
            }),
        }
    }
}

/// The entity a join step arrives at.
pub(crate) fn step_target<'a>(step: &JoinStep<'a>) -> &'a str {
    if step.forward {
        step.join.to_entity()
    } else {
        step.join.from_entity()
    }
}

/// The join condition of a step travelled from `here` to `next`.
fn step_condition(
    ctx: &Ctx<'_>,
    step: &JoinStep<'_>,
    here: &Ident,
    next: &Ident,
) -> Result<Sql, RenderError> {
    if step.forward {
        ctx.join_condition(step.join, here, next)
    } else {
        ctx.join_condition(step.join, next, here)
    }
}

/// A stable key for a route: which joins, in which direction.
fn route_key(model: &SemanticModel, route: &[JoinStep<'_>]) -> Vec<(usize, bool)> {
    route
        .iter()
        .map(|s| {
            (
                model
                    .joins
                    .iter()
                    .position(|j| std::ptr::eq(j, s.join))
                    .unwrap_or(usize::MAX),
                s.forward,
            )
        })
        .collect()
}

/// One `SELECT` level: the anchor table and the many-to-one joins added to it.
pub(crate) struct Scope {
    /// The anchor entity's name.
    pub entity: String,
    /// The anchor's alias.
    pub alias: Ident,
    /// Joined routes (by key) and the alias at their end.
    joined: Vec<(Vec<(usize, bool)>, Ident)>,
    /// The join clauses in the order added, each `table AS alias ON …` with the key of
    /// its route (the keyword is chosen when they are written out).
    joins: Vec<(Vec<(usize, bool)>, Sql)>,
    /// Top level: left joins, entity names as aliases. Subquery: inner joins, fresh aliases.
    top: bool,
    /// Top level: routes whose every row the `WHERE` requires to be matched (see
    /// [`Scope::require`]); they are written as inner joins.
    required: Vec<Vec<(usize, bool)>>,
}

impl Scope {
    /// The outermost scope: the plan's entity, aliased by its own name.
    pub(crate) fn top(entity: &Entity) -> Result<Scope, RenderError> {
        Ok(Scope {
            entity: entity.name.clone(),
            alias: Ident::new(&entity.name)?,
            joined: Vec::new(),
            joins: Vec::new(),
            top: true,
            required: Vec::new(),
        })
    }

    /// A subquery scope (inside `EXISTS`) anchored at `entity` with `alias`.
    pub(crate) fn sub(entity: &str, alias: Ident) -> Scope {
        Scope {
            entity: entity.to_owned(),
            alias,
            joined: Vec::new(),
            joins: Vec::new(),
            top: false,
            required: Vec::new(),
        }
    }

    /// The join clauses, concatenated (each starts with a space).
    pub(crate) fn join_clauses(&self) -> Sql {
        let mut s = Sql::new();
        for (key, clause) in &self.joins {
            let inner = !self.top || self.required.contains(key);
            s.push(if inner { " JOIN " } else { " LEFT JOIN " });
            s.push_sql_ref(clause);
        }
        s
    }

    /// Marks a many-to-one `route` from the anchor (and each route it extends) as one the
    /// query's `WHERE` only keeps rows for when the joined row exists: a top-level
    /// condition on a column at its end that is false or unknown on a null (`=`, `<`,
    /// `IN`, `BETWEEN`, `IS NOT NULL`). A `LEFT JOIN` there returns the same rows as an
    /// inner join (the null-extended rows are filtered out), and the inner join lets
    /// the database start from the joined table ("assessments at Riverside in 2026"
    /// reads Riverside's wounds' assessments instead of every 2026 assessment). Each
    /// step's `ON` compares a column of the previous alias, so a matched row at the end
    /// implies a matched row at every step before it.
    pub(crate) fn require(&mut self, model: &SemanticModel, route: &[JoinStep<'_>]) {
        if !self.top || route.iter().any(|s| !s.forward) {
            return;
        }
        for i in 0..route.len() {
            let key = route_key(model, &route[..=i]);
            if !self.required.contains(&key) {
                self.required.push(key);
            }
        }
    }

    /// The alias at the end of a many-to-one `route` from the anchor, joining what is missing.
    pub(crate) fn alias_for(
        &mut self,
        ctx: &mut Ctx<'_>,
        route: &[JoinStep<'_>],
    ) -> Result<Ident, RenderError> {
        let mut here = self.alias.clone();
        for i in 0..route.len() {
            let step = &route[i];
            debug_assert!(step.forward, "scopes only join many-to-one");
            let key = route_key(ctx.model, &route[..=i]);
            if let Some((_, alias)) = self.joined.iter().find(|(k, _)| *k == key) {
                here = alias.clone();
                continue;
            }
            let target = ctx.entity(step_target(step))?;
            let name_taken =
                target.name == self.entity || self.joined.iter().any(|(_, a)| a.as_str() == target.name);
            let alias = if self.top && !name_taken {
                Ident::new(&target.name)?
            } else {
                ctx.fresh_alias(&target.name)?
            };
            let mut clause = Sql::new();
            clause
                .push_ident(&ctx.table(target)?)
                .push(" AS ")
                .push_ident(&alias)
                .push(" ON ");
            // a parent outside the row scope is not joined (its attributes read as null)
            let on = step_condition(ctx, step, &here, &alias)?;
            clause.push_sql(super::scope::and_scope(ctx, on, &alias, &target.name)?);
            self.joins.push((key.clone(), clause));
            self.joined.push((key, alias.clone()));
            here = alias;
        }
        Ok(here)
    }
}

/// The index of the first one-to-many step of a route, if any.
pub(crate) fn first_fan_out(route: &[JoinStep<'_>]) -> Option<usize> {
    route.iter().position(|s| !s.forward)
}

/// A correlated subquery's `FROM` (with joins along `path`) and its correlation with
/// the outer row `outer`, plus the alias of the path's last entity.
pub(crate) struct Correlated {
    pub from: Sql,
    pub correlation: Sql,
    pub last: Ident,
}

/// Builds the `FROM … JOIN …` of a subquery that walks `path` from the outer alias.
pub(crate) fn correlated(
    ctx: &mut Ctx<'_>,
    outer: &Ident,
    path: &[JoinStep<'_>],
) -> Result<Correlated, RenderError> {
    let Some(first) = path.first() else {
        return Err(RenderError::InvalidPlan {
            reason: "a related-row subquery needs a join path".into(),
        });
    };
    let first_entity = ctx.entity(step_target(first))?;
    let mut here = ctx.fresh_alias(&first_entity.name)?;
    let correlation = step_condition(ctx, first, outer, &here)?;
    // related rows outside the row scope are neither counted nor picked
    let correlation = super::scope::and_scope(ctx, correlation, &here, &first_entity.name)?;
    let mut from = Sql::new();
    from.push_ident(&ctx.table(first_entity)?)
        .push(" AS ")
        .push_ident(&here);
    for step in &path[1..] {
        let entity = ctx.entity(step_target(step))?;
        let next = ctx.fresh_alias(&entity.name)?;
        from.push(" JOIN ")
            .push_ident(&ctx.table(entity)?)
            .push(" AS ")
            .push_ident(&next)
            .push(" ON ");
        let on = step_condition(ctx, step, &here, &next)?;
        from.push_sql(super::scope::and_scope(ctx, on, &next, &entity.name)?);
        here = next;
    }
    Ok(Correlated {
        from,
        correlation,
        last: here,
    })
}

/// The expression of `attr` for the row aliased `alias` (which must be `attr`'s entity).
pub(crate) fn attr_expr(
    ctx: &mut Ctx<'_>,
    alias: &Ident,
    attr: AttributeRef<'_>,
) -> Result<Sql, RenderError> {
    attr_expr_at(ctx, alias, attr, 0)
}

fn attr_expr_at(
    ctx: &mut Ctx<'_>,
    alias: &Ident,
    attr: AttributeRef<'_>,
    depth: usize,
) -> Result<Sql, RenderError> {
    if depth > MAX_DERIVATION_DEPTH {
        return Err(RenderError::DerivationTooDeep {
            attribute: attr.qualified(),
        });
    }
    if let Some(column) = &attr.attribute.column {
        return Ok(Sql::column(alias, &Ident::new(column)?));
    }
    let Some(derived) = &attr.attribute.derived else {
        return Err(RenderError::NotAColumn {
            attribute: attr.qualified(),
        });
    };
    let entity = attr.entity;
    match derived {
        Derived::DaysBetween { from, to, if_null } => {
            let from = date_operand(ctx, alias, entity, from, depth)?;
            let mut to = date_operand(ctx, alias, entity, to, depth)?;
            if let Some(fallback) = if_null {
                let mut c = Sql::text("COALESCE(");
                c.push_sql(to)
                    .push(", ")
                    .push_sql(date_operand(ctx, alias, entity, fallback, depth)?)
                    .push(")");
                to = c;
            }
            Ok(ctx.dialect.days_between(from, to))
        }
        Derived::YearsBetween { from, to } => {
            let from = date_operand(ctx, alias, entity, from, depth)?;
            let to = date_operand(ctx, alias, entity, to, depth)?;
            let d = ctx.dialect;
            let mut s = Sql::text("(");
            s.push_sql(d.year_of(to.clone()))
                .push(" - ")
                .push_sql(d.year_of(from.clone()));
            s.push(" - CASE WHEN ")
                .push_sql(d.month_day_of(to))
                .push(" < ")
                .push_sql(d.month_day_of(from));
            s.push(" THEN 1 ELSE 0 END)");
            Ok(s)
        }
        Derived::Latest { attribute, by } | Derived::First { attribute, by } => {
            let newest = matches!(derived, Derived::Latest { .. });
            let target = ctx.attribute(attribute)?;
            let by = ordering_date(ctx, target, by.as_deref())?;
            let path = ctx.join_path(&entity.name, &target.entity.name)?;
            pick_related(ctx, alias, &path, target, by, newest, None, depth + 1)
        }
        Derived::CountRelated { entity: related } => {
            let path = ctx.join_path(&entity.name, related)?;
            count_related(ctx, alias, &path, None, &mut |_, _| Ok(None))
        }
        Derived::PercentChange { from, to } => {
            let from = attr_expr_at(ctx, alias, ctx.local_attribute(entity, from)?, depth + 1)?;
            let to = attr_expr_at(ctx, alias, ctx.local_attribute(entity, to)?, depth + 1)?;
            let mut s = Sql::text("((");
            s.push_sql(to)
                .push(" - ")
                .push_sql(from.clone())
                .push(") * 100.0 / NULLIF(")
                .push_sql(from);
            s.push(", 0))");
            Ok(s)
        }
        Derived::Difference { from, to } => {
            let from = attr_expr_at(ctx, alias, ctx.local_attribute(entity, from)?, depth + 1)?;
            let to = attr_expr_at(ctx, alias, ctx.local_attribute(entity, to)?, depth + 1)?;
            let mut s = Sql::text("(");
            s.push_sql(to).push(" - ").push_sql(from);
            s.push(")");
            Ok(s)
        }
    }
}

fn date_operand(
    ctx: &mut Ctx<'_>,
    alias: &Ident,
    entity: &Entity,
    operand: &DateOperand,
    depth: usize,
) -> Result<Sql, RenderError> {
    match operand {
        DateOperand::Today => Ok(ctx.today_param()),
        DateOperand::Attribute(name) => {
            let attr = ctx.local_attribute(entity, name)?;
            attr_expr_at(ctx, alias, attr, depth + 1)
        }
    }
}

/// The date ordering the rows of `target`'s entity: `by`, or its default time dimension.
pub(crate) fn ordering_date<'m>(
    ctx: &Ctx<'m>,
    target: AttributeRef<'_>,
    by: Option<&str>,
) -> Result<AttributeRef<'m>, RenderError> {
    let by = match by {
        Some(b) => ctx.attribute(b)?,
        None => default_date(ctx, &target.entity.name)?,
    };
    if by.entity.name != target.entity.name {
        return Err(RenderError::UnsupportedDerivation {
            attribute: target.qualified(),
            reason: format!("its ordering date {} belongs to another entity", by.qualified()),
        });
    }
    if by.attribute.ty != AttributeType::Date {
        return Err(RenderError::TypeMismatch {
            attribute: by.qualified(),
            expected: AttributeType::Date,
            found: by.attribute.ty.as_str(),
        });
    }
    Ok(by)
}

/// The attribute of an entity's default time dimension.
pub(crate) fn default_date<'m>(ctx: &Ctx<'m>, entity: &str) -> Result<AttributeRef<'m>, RenderError> {
    let dim = ctx
        .model
        .default_time_dimension(entity)
        .ok_or_else(|| RenderError::NoTimeDimension {
            entity: entity.to_owned(),
        })?;
    ctx.attribute(&dim.attribute)
}

/// `(SELECT target FROM … WHERE correlated [AND by <= upto] ORDER BY by, key LIMIT 1)`:
/// the value on the newest (or oldest) related row, ties broken by the key.
#[allow(clippy::too_many_arguments)]
pub(crate) fn pick_related(
    ctx: &mut Ctx<'_>,
    outer: &Ident,
    path: &[JoinStep<'_>],
    target: AttributeRef<'_>,
    by: AttributeRef<'_>,
    newest: bool,
    upto: Option<NaiveDate>,
    depth: usize,
) -> Result<Sql, RenderError> {
    if upto.is_none()
        && let Some(s) = from_summary(ctx, outer, path, target, by, newest)?
    {
        return Ok(s);
    }
    let sub = correlated(ctx, outer, path)?;
    let value = attr_expr_at(ctx, &sub.last, target, depth)?;
    let date = attr_expr_at(ctx, &sub.last, by, depth)?;
    let key = Sql::column(&sub.last, &ctx.key_column(target.entity)?);
    // NULLS LAST only where a NULL can occur: on a NOT NULL date the database can walk
    // an index on (parent, date) in order instead of sorting
    let dir = match (newest, by.attribute.not_null) {
        (true, true) => " DESC, ",
        (false, true) => " ASC, ",
        (true, false) => " DESC NULLS LAST, ",
        (false, false) => " ASC NULLS LAST, ",
    };
    let mut s = Sql::text("(SELECT ");
    s.push_sql(value)
        .push(" FROM ")
        .push_sql(sub.from)
        .push(" WHERE ")
        .push_sql(sub.correlation);
    if let Some(upto) = upto {
        s.push(" AND ")
            .push_sql(date.clone())
            .push(" <= ")
            .push_param(BoundValue::Date(upto));
    }
    s.push(" ORDER BY ").push_sql(date).push(dir).push_sql(key);
    s.push(if newest { " DESC LIMIT 1)" } else { " ASC LIMIT 1)" });
    Ok(s)
}

/// `(SELECT s.column FROM wound_latest_assessment AS s WHERE s.wound_id = outer.id)`:
/// the row [`pick_related`] would pick, read from the summary Clarion keeps of it
/// (`super::summary`), when the warehouse found the summary current and the shape is
/// exactly the one it holds; `None` otherwise (rendered live).
fn from_summary(
    ctx: &mut Ctx<'_>,
    outer: &Ident,
    path: &[JoinStep<'_>],
    target: AttributeRef<'_>,
    by: AttributeRef<'_>,
    newest: bool,
) -> Result<Option<Sql>, RenderError> {
    use super::summary as s;
    if !ctx.summaries.assessment_ends {
        return Ok(None);
    }
    let [step] = path else { return Ok(None) };
    let child = target.entity;
    let Some(parent) = ctx.model.entity(step.join.to_entity()) else {
        return Ok(None);
    };
    let column = |a: AttributeRef<'_>| a.attribute.column.clone().unwrap_or_default();
    let fk = ctx.attribute(&step.join.from).map(column)?;
    let pk = ctx.attribute(&step.join.to).map(column)?;
    let exact = !step.forward
        && step.join.from_entity() == child.name
        && child.table == s::CHILD_TABLE
        && parent.table == s::PARENT_TABLE
        && fk == s::FOREIGN_KEY
        && pk == s::PARENT_KEY
        && ctx.key_column(child)?.as_str() == s::CHILD_KEY
        && by.entity.name == child.name
        && column(by) == s::DATE_COLUMN
        && target.attribute.derived.is_none()
        && s::COLUMNS.contains(&column(target).as_str());
    if !exact {
        return Ok(None);
    }
    // The summary row stands for the child rows of the (scoped) outer row: usable only
    // when the child's row scope is its parent's, not a condition on the child itself.
    if let Some(c) = ctx.rows.constraint(&child.name)?
        && !constraint_on(c, &parent.name)
    {
        return Ok(None);
    }
    let here = ctx.fresh_alias(s::table(newest))?;
    let mut sql = Sql::text("(SELECT ");
    sql.push_sql(Sql::column(&here, &Ident::new(&column(target))?))
        .push(" FROM ")
        .push_ident(&Ident::new(s::table(newest))?)
        .push(" AS ")
        .push_ident(&here)
        .push(" WHERE ")
        .push_sql(ctx.join_condition(step.join, &here, outer)?)
        .push(")");
    Ok(Some(sql))
}

/// True when every attribute `c` reads belongs to `entity`.
fn constraint_on(c: &crate::semantic::Constraint, entity: &str) -> bool {
    let attrs = c.attributes();
    !attrs.is_empty()
        && attrs
            .iter()
            .all(|a| split_qualified(a).is_some_and(|(e, _)| e == entity))
}

/// `(SELECT COUNT(*) FROM … WHERE correlated [AND date BETWEEN window])`.
/// Renders an extra condition on the counted row (aliased by the `Ident`), if any.
pub(crate) type RowCondition<'f> = dyn FnMut(&mut Ctx<'_>, &Ident) -> Result<Option<Sql>, RenderError> + 'f;

pub(crate) fn count_related(
    ctx: &mut Ctx<'_>,
    outer: &Ident,
    path: &[JoinStep<'_>],
    window: Option<(AttributeRef<'_>, NaiveDate)>,
    on_row: &mut RowCondition<'_>,
) -> Result<Sql, RenderError> {
    let sub = correlated(ctx, outer, path)?;
    // through a many-to-one step ("clinicians … 50 different wounds": their assessments'
    // wounds) the same row is reached more than once: count it once
    let through_parent = path.iter().any(|step| step.forward);
    let mut s = if through_parent {
        let target = step_target(path.last().expect("non-empty path"));
        let entity = ctx.model.entity(target).ok_or_else(|| RenderError::InvalidPlan {
            reason: format!("no entity {target}"),
        })?;
        let key = ctx.key_column(entity)?;
        let mut s = Sql::text("(SELECT COUNT(DISTINCT ");
        s.push_sql(Sql::column(&sub.last, &key)).push(") FROM ");
        s
    } else {
        Sql::text("(SELECT COUNT(*) FROM ")
    };
    s.push_sql(sub.from).push(" WHERE ").push_sql(sub.correlation);
    if let Some(cond) = on_row(ctx, &sub.last)? {
        s.push(" AND ").push_sql(cond);
    }
    if let Some((date_attr, start)) = window {
        if date_attr.entity.name != step_target(path.last().expect("non-empty path")) {
            return Err(RenderError::InvalidPlan {
                reason: format!(
                    "the window date {} is not on the counted entity",
                    date_attr.qualified()
                ),
            });
        }
        let date = attr_expr(ctx, &sub.last, date_attr)?;
        s.push(" AND ")
            .push_sql(date.clone())
            .push(" >= ")
            .push_param(BoundValue::Date(start));
        s.push(" AND ")
            .push_sql(date)
            .push(" <= ")
            .push_sql(ctx.today_param());
    }
    s.push(")");
    Ok(s)
}
