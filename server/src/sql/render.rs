//! `QueryPlan` → SQL text plus bound values, for SQLite or PostgreSQL.
//!
//! The only place SQL is generated from a plan (Principle 1). Every value from the
//! plan — filter literals, dates, `today` and the cut-offs computed from it, limits —
//! is bound as a parameter; the only runtime text in the SQL is identifiers taken from
//! the semantic model, validated and quoted (see `fragment.rs`). Joins follow the
//! model's join paths from the plan's entity; many-to-one joins are `LEFT JOIN`s,
//! filters across one-to-many joins are `EXISTS` subqueries (see `predicate.rs`), and
//! columns, dimensions and metrics must not cross a one-to-many join (they would
//! multiply rows) — that is refused with [`RenderError::FanOut`].
//!
//! Query shapes:
//! - `List`: the entity's key and display attribute, the requested columns and the
//!   sort attributes, ordered by the plan's sort keys then the key (deterministic).
//! - every other intent: the dimensions and metrics (a row count when the plan has
//!   none), grouped by the dimensions, ordered by the plan's keys (a `Rank` defaults to
//!   its first metric, descending), then by every dimension ascending; `NULLS LAST`.
//! - [`render_count`]: `COUNT(*)` of the base rows matching the filters (previews).
//!
//! What this module must not do: execute anything, read the clock, interpolate a
//! value into SQL text, or accept an identifier that is not in the model.

use serde::Serialize;

use super::dialect::Dialect;
use super::expr::{Ctx, Scope, attr_expr, correlated, first_fan_out};
use super::fragment::{BoundValue, Ident, Sql};
use super::predicate::{Leaf, Pred, and_all, lower, null_rejecting_routes, render_conjunction, require_type};
use super::scope::RowScope;
use crate::engine::PlanCheck;
use crate::engine::plan::{Dimension, Intent, Metric, OrderBy, OrderKey, QueryPlan};
use crate::semantic::{
    AttributeRef, AttributeType, CompareOp, DateOperand, Derived, Grain, MeasureAgg, SemanticModel, SortOrder,
};

/// A rendered statement: SQL text with placeholders and the values to bind, in order.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Rendered {
    /// The dialect the text is written in.
    pub dialect: Dialect,
    /// The statement, with `?` (SQLite) or `$n` (PostgreSQL) placeholders.
    pub sql: String,
    /// The values for the placeholders: the n-th `?`, or `$n` → `values[n - 1]`.
    pub values: Vec<BoundValue>,
    /// The result columns, in select order.
    pub columns: Vec<OutputColumn>,
    /// The executor's row cap this was rendered with (the statement fetches at most
    /// `cap + 1` rows so truncation can be detected).
    pub row_cap: Option<u32>,
}

impl Rendered {
    /// True when a result of `rows` rows went past the cap (drop the extra row and
    /// tell the user the result was truncated).
    pub fn is_truncated(&self, rows: usize) -> bool {
        self.row_cap.is_some_and(|cap| rows > cap as usize)
    }
}

/// One result column.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OutputColumn {
    /// The SQL alias (`wounds.latest_area`, `metric_0`).
    pub name: String,
    /// A short human label.
    pub label: String,
    /// Value type as returned on both backends: integers as 64-bit, reals as double,
    /// booleans as booleans (0/1 on SQLite), dates as ISO `YYYY-MM-DD` text.
    pub ty: AttributeType,
    /// What the column shows.
    pub source: ColumnSource,
}

/// Where a result column comes from.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ColumnSource {
    /// An attribute's value (list column or grouping dimension).
    Attribute { attribute: String },
    /// A date attribute truncated to a grain (the period's first day).
    Bucket { attribute: String, grain: Grain },
    /// The plan's metric at this index.
    Metric { index: usize },
    /// The number of matching rows (a plan without metrics, or [`render_count`]).
    RowCount,
    /// The key of the record a grouping names by its label (`clinics.id` beside
    /// `clinics.name`): grouped by too, so two records with one name stay two groups.
    /// After the metrics; the answer's table shows it only to tell namesakes apart.
    GroupKey { attribute: String },
}

/// Why a plan could not be rendered. Every variant is a bug or a model/plan mismatch
/// upstream (the engine validates plans); none is caused by the database.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum RenderError {
    #[error("unknown entity {entity:?}")]
    UnknownEntity { entity: String },
    #[error("unknown attribute {attribute:?}")]
    UnknownAttribute { attribute: String },
    #[error("unknown time dimension {name:?}")]
    UnknownTimeDimension { name: String },
    #[error("{entity} has no default time dimension, and the constraint names none")]
    NoTimeDimension { entity: String },
    #[error(
        "{name:?} is not a plain SQL identifier; the model must name tables and columns with [A-Za-z0-9_]"
    )]
    BadIdentifier { name: String },
    #[error("{attribute} is not backed by a column")]
    NotAColumn { attribute: String },
    #[error("no join path from {from} to {to}")]
    NoJoinPath { from: String, to: String },
    #[error(
        "{attribute} is on the many side of {entity}; showing, grouping or aggregating it per {entity} row would repeat rows — ask about {attribute}'s entity instead"
    )]
    FanOut { attribute: String, entity: String },
    #[error("{attribute} is {expected}, but the plan gives {found}")]
    TypeMismatch {
        attribute: String,
        expected: AttributeType,
        found: &'static str,
    },
    #[error("{value:?} is not an ISO date (YYYY-MM-DD) for {attribute}")]
    BadDate { attribute: String, value: String },
    #[error("{attribute}: numbers must be finite")]
    BadNumber { attribute: String },
    #[error("{attribute} has no order (only numbers and dates can be compared with <, >, between)")]
    NotOrdered { attribute: String },
    #[error("{attribute} is in {expected}, the plan says {found}")]
    UnitMismatch {
        attribute: String,
        expected: String,
        found: String,
    },
    #[error("{attribute}: a set of values must not be empty")]
    EmptySet { attribute: String },
    #[error("a relative date falls outside the calendar")]
    DateOutOfRange,
    #[error("derived attribute {attribute} refers to derived attributes too deeply (a cycle?)")]
    DerivationTooDeep { attribute: String },
    #[error("derived attribute {attribute} cannot be rendered: {reason}")]
    UnsupportedDerivation { attribute: String, reason: String },
    #[error("invalid plan: {reason}")]
    InvalidPlan { reason: String },
}

impl RenderError {
    /// A stable machine code.
    pub fn code(&self) -> &'static str {
        match self {
            RenderError::UnknownEntity { .. } => "unknown_entity",
            RenderError::UnknownAttribute { .. } => "unknown_attribute",
            RenderError::UnknownTimeDimension { .. } => "unknown_time_dimension",
            RenderError::NoTimeDimension { .. } => "no_time_dimension",
            RenderError::BadIdentifier { .. } => "bad_identifier",
            RenderError::NotAColumn { .. } => "not_a_column",
            RenderError::NoJoinPath { .. } => "no_join_path",
            RenderError::FanOut { .. } => "fan_out",
            RenderError::TypeMismatch { .. } => "type_mismatch",
            RenderError::BadDate { .. } => "bad_date",
            RenderError::BadNumber { .. } => "bad_number",
            RenderError::NotOrdered { .. } => "not_ordered",
            RenderError::UnitMismatch { .. } => "unit_mismatch",
            RenderError::EmptySet { .. } => "empty_set",
            RenderError::DateOutOfRange => "date_out_of_range",
            RenderError::DerivationTooDeep { .. } => "derivation_too_deep",
            RenderError::UnsupportedDerivation { .. } => "unsupported_derivation",
            RenderError::InvalidPlan { .. } => "invalid_plan",
        }
    }
}

impl RenderError {
    /// Why the plan cannot run, in the user's words: model names as labels, no SQL.
    pub fn user_message(&self, model: &SemanticModel) -> String {
        let label = |qualified: &str| -> String {
            model
                .attribute(qualified)
                .map(|a| {
                    format!(
                        "{} of {}",
                        a.attribute.name.replace('_', " "),
                        a.entity.label.to_lowercase()
                    )
                })
                .or_else(|| model.entity(qualified).map(|e| e.label.to_lowercase()))
                .unwrap_or_else(|| qualified.replace(['_', '.'], " "))
        };
        match self {
            RenderError::FanOut { attribute, entity } => format!(
                "{} has many values per {}, so that reading would count records more than once",
                label(attribute),
                label(entity)
            ),
            RenderError::TypeMismatch { attribute, .. }
            | RenderError::NotOrdered { attribute }
            | RenderError::UnitMismatch { attribute, .. }
            | RenderError::BadDate { attribute, .. }
            | RenderError::BadNumber { attribute }
            | RenderError::EmptySet { attribute } => {
                format!("a value in the question does not fit {}", label(attribute))
            }
            RenderError::DateOutOfRange => "a date in the question is out of range".to_owned(),
            // a ranking within groups that cannot be built says why, in the user's words
            RenderError::InvalidPlan { reason } if reason.contains("within each group") => reason.clone(),
            _ => "I could not turn my reading of it into a query".to_owned(),
        }
    }
}

/// The renderer's rules as the engine's [`PlanCheck`]: a plan is valid when it renders in
/// every dialect.
#[derive(Clone, Copy, Debug)]
pub struct RenderCheck<'m> {
    /// The model plans are rendered against.
    pub model: &'m SemanticModel,
}

impl PlanCheck for RenderCheck<'_> {
    fn check(&self, plan: &QueryPlan) -> Result<(), String> {
        for d in Dialect::ALL {
            render(plan, self.model, d).map_err(|e| e.user_message(self.model))?;
        }
        Ok(())
    }
}

/// Renders `plan` for `dialect`, with the plan's own limit only.
pub fn render(plan: &QueryPlan, model: &SemanticModel, dialect: Dialect) -> Result<Rendered, RenderError> {
    Builder::new(plan, model, dialect)?.query(None)
}

/// Renders `plan` so that it returns at most `row_cap + 1` rows (see
/// [`Rendered::is_truncated`]); a smaller limit in the plan still applies.
pub fn render_with_cap(
    plan: &QueryPlan,
    model: &SemanticModel,
    dialect: Dialect,
    row_cap: u32,
) -> Result<Rendered, RenderError> {
    Builder::new(plan, model, dialect)?.query(Some(row_cap))
}

/// [`render_with_cap`], reading the summaries `summaries` says are current where a
/// derived attribute is the shape they hold (`super::summary`); the rows are the same.
pub fn render_with_cap_using(
    plan: &QueryPlan,
    model: &SemanticModel,
    dialect: Dialect,
    row_cap: u32,
    summaries: super::summary::SummaryUse,
) -> Result<Rendered, RenderError> {
    let mut b = Builder::new(plan, model, dialect)?;
    b.ctx.summaries = summaries;
    b.query(Some(row_cap))
}

/// [`render_with_cap_using`] reading only the rows `rows` allows, on every table the
/// statement reads (`super::scope`): what every statement run for a user goes through.
pub fn render_scoped(
    plan: &QueryPlan,
    model: &SemanticModel,
    dialect: Dialect,
    row_cap: u32,
    summaries: super::summary::SummaryUse,
    rows: &RowScope,
) -> Result<Rendered, RenderError> {
    let mut b = Builder::new(plan, model, dialect)?;
    b.ctx.summaries = summaries;
    b.ctx.rows = rows.clone();
    b.query(Some(row_cap))
}

/// `COUNT(*)` of the plan entity's rows matching the plan's filters and time range
/// (intent, metrics, dimensions, order and limit are ignored): option-count previews.
pub fn render_count(
    plan: &QueryPlan,
    model: &SemanticModel,
    dialect: Dialect,
) -> Result<Rendered, RenderError> {
    render_count_scoped(plan, model, dialect, &RowScope::All)
}

/// [`render_count`] counting only the rows `rows` allows (`super::scope`).
pub fn render_count_scoped(
    plan: &QueryPlan,
    model: &SemanticModel,
    dialect: Dialect,
    rows: &RowScope,
) -> Result<Rendered, RenderError> {
    let mut b = Builder::new(plan, model, dialect)?;
    b.ctx.rows = rows.clone();
    let conds = b.filters()?;
    let mut select = Sql::text("SELECT COUNT(*) AS ");
    select.push_ident(&Ident::new("row_count")?);
    let columns = vec![OutputColumn {
        name: "row_count".into(),
        label: "Count".into(),
        ty: AttributeType::Integer,
        source: ColumnSource::RowCount,
    }];
    let mut sql = select;
    sql.push_sql(b.source_sql(&conds));
    let (sql, values) = sql.finish(dialect);
    Ok(Rendered {
        dialect,
        sql,
        values,
        columns,
        row_cap: None,
    })
}

/// The clinical data's version as the option-count cache reads it: the largest key of
/// every entity's table (`SELECT (SELECT MAX(key) FROM t) AS v0, …`). A new row changes it
/// at once; each lookup is one index probe, so it costs well under a millisecond at any
/// size (a `COUNT(*)` would scan the table).
pub fn render_data_version(model: &SemanticModel, dialect: Dialect) -> Result<Rendered, RenderError> {
    let mut sql = Sql::text("SELECT ");
    let mut columns = Vec::new();
    for (i, e) in model.entities.iter().enumerate() {
        if i > 0 {
            sql.push(", ");
        }
        let alias = Ident::new(&format!("v{i}"))?;
        sql.push("(SELECT MAX(")
            .push_ident(&Ident::new(&e.key)?)
            .push(") FROM ")
            .push_ident(&Ident::new(&e.table)?)
            .push(") AS ")
            .push_ident(&alias);
        columns.push(OutputColumn {
            name: alias.as_str().to_owned(),
            label: e.name.clone(),
            ty: AttributeType::Integer,
            source: ColumnSource::RowCount,
        });
    }
    if columns.is_empty() {
        return Err(RenderError::InvalidPlan {
            reason: "the model has no entities".into(),
        });
    }
    let (sql, values) = sql.finish(dialect);
    Ok(Rendered {
        dialect,
        sql,
        values,
        columns,
        row_cap: None,
    })
}

/// One output expression with its alias.
struct Selected {
    expr: Sql,
    alias: Ident,
    column: OutputColumn,
}

/// Writes `expr AS alias, …` and returns the output columns in that order.
fn push_select_list(s: &mut Sql, selected: Vec<Selected>) -> Vec<OutputColumn> {
    let mut columns = Vec::new();
    for (i, sel) in selected.into_iter().enumerate() {
        if i > 0 {
            s.push(", ");
        }
        s.push_sql(sel.expr).push(" AS ").push_ident(&sel.alias);
        columns.push(sel.column);
    }
    columns
}

/// A metric's SQL: a plain aggregate, or (SQLite) a median computed in a CTE.
enum MetricSql {
    Aggregate(Sql),
    Median { input: Sql },
}

struct Builder<'p, 'm> {
    plan: &'p QueryPlan,
    ctx: Ctx<'m>,
    scope: Scope,
    /// The plan entity's table.
    table: Ident,
    /// The plan's limit was applied with its ties (`limit_ties`), inside the statement.
    tied: bool,
}

impl<'p, 'm> Builder<'p, 'm> {
    fn new(plan: &'p QueryPlan, model: &'m SemanticModel, dialect: Dialect) -> Result<Self, RenderError> {
        let ctx = Ctx::new(model, dialect, plan.today);
        let base = ctx.entity(&plan.entity)?;
        let table = ctx.table(base)?;
        Ok(Builder {
            plan,
            scope: Scope::top(base)?,
            ctx,
            table,
            tied: false,
        })
    }

    fn dialect(&self) -> Dialect {
        self.ctx.dialect
    }

    /// The plan's filters and time range as `WHERE` conditions.
    fn filters(&mut self) -> Result<Vec<Sql>, RenderError> {
        let base = self.plan.entity.as_str();
        let mut preds = Vec::new();
        for f in &self.plan.filters {
            preds.push(lower(&self.ctx, base, f)?);
        }
        if let Some(range) = &self.plan.time_range {
            let attr = self.ctx.attribute(&range.attribute)?;
            require_type(attr, AttributeType::Date)?;
            let route = self.ctx.join_path(base, &attr.entity.name)?;
            let bound = |op, d| Pred::Leaf {
                route: route.clone(),
                leaf: Leaf::Compare {
                    attr,
                    op,
                    value: BoundValue::Date(d),
                },
            };
            preds.push(Pred::And(vec![
                bound(CompareOp::Gte, range.start),
                bound(CompareOp::Lt, range.end),
            ]));
        }
        // a join the WHERE needs a matched row of is written as an inner join
        let mut required = Vec::new();
        null_rejecting_routes(&preds, &mut required);
        for route in required {
            self.scope.require(self.ctx.model, route);
        }
        let mut conds = render_conjunction(&mut self.ctx, &mut self.scope, preds)?;
        // The plan's own rows: the orchestrator's scope filter renders the same condition
        // when it is on the row itself; otherwise it is added here as well.
        let own = self
            .ctx
            .rows
            .constraint(base)?
            .filter(|c| {
                !(self.plan.filters.contains(*c)
                    && c.attributes().iter().all(|a| a.starts_with(&format!("{base}."))))
            })
            .is_some();
        if own {
            let alias = self.scope.alias.clone();
            conds.extend(super::scope::condition(&mut self.ctx, &alias, base)?);
        }
        Ok(conds)
    }

    /// `FROM … JOIN … [WHERE …]`, with every join added so far.
    fn source_sql(&self, conds: &[Sql]) -> Sql {
        let mut s = Sql::text("\nFROM ");
        s.push_ident(&self.table)
            .push(" AS ")
            .push_ident(&self.scope.alias);
        s.push_sql(self.scope.join_clauses());
        if !conds.is_empty() {
            s.push("\nWHERE ")
                .push_sql(Sql::join(conds.iter().cloned(), " AND "));
        }
        s
    }

    /// An attribute reachable without crossing a one-to-many join, and its expression.
    fn attribute_expr(&mut self, qualified: &str) -> Result<(AttributeRef<'m>, Sql), RenderError> {
        let attr = self.ctx.attribute(qualified)?;
        let route = self.ctx.join_path(&self.plan.entity, &attr.entity.name)?;
        if first_fan_out(&route).is_some() {
            return Err(RenderError::FanOut {
                attribute: qualified.to_owned(),
                entity: self.plan.entity.clone(),
            });
        }
        let alias = self.scope.alias_for(&mut self.ctx, &route)?;
        let expr = attr_expr(&mut self.ctx, &alias, attr)?;
        Ok((attr, expr))
    }

    fn query(mut self, cap: Option<u32>) -> Result<Rendered, RenderError> {
        if self.plan.limit_per_group.is_some() && self.plan.intent == Intent::List {
            return Err(RenderError::InvalidPlan {
                reason: "records ranked within each group cannot be listed yet: ask for the top records overall, or for values ranked within each group (\"the most common etiologies in each clinic\")".into(),
            });
        }
        let conds = self.filters()?;
        let (mut text, columns) = match self.plan.intent {
            Intent::List => self.list(&conds)?,
            _ => self.aggregate(&conds)?,
        };
        // with its ties the plan's limit is inside the statement; the cap still applies
        let plan_limit = self.plan.limit.filter(|_| !self.tied);
        let limit = match (plan_limit, cap) {
            (Some(l), Some(c)) => Some(u64::from(l).min(u64::from(c) + 1)),
            (Some(l), None) => Some(u64::from(l)),
            (None, Some(c)) => Some(u64::from(c) + 1),
            (None, None) => None,
        };
        // An aggregate without dimensions is one row; a limit means nothing there.
        let many_rows = self.plan.intent == Intent::List || !self.plan.dimensions.is_empty();
        if let Some(l) = limit.filter(|_| many_rows) {
            text.push("\nLIMIT ").push_param(BoundValue::Int(l as i64));
        }
        // "the second-highest": skip the rows ranked before it
        if let Some(o) = self.plan.offset.filter(|&o| o > 0 && many_rows) {
            if limit.is_none() {
                // both dialects need a LIMIT before OFFSET; none means every row
                text.push("\nLIMIT ").push_param(BoundValue::Int(i64::MAX));
            }
            text.push(" OFFSET ").push_param(BoundValue::Int(i64::from(o)));
        }
        let dialect = self.dialect();
        let (sql, values) = text.finish(dialect);
        Ok(Rendered {
            dialect,
            sql,
            values,
            columns,
            row_cap: cap,
        })
    }

    fn list(&mut self, conds: &[Sql]) -> Result<(Sql, Vec<OutputColumn>), RenderError> {
        if !self.plan.metrics.is_empty() || !self.plan.dimensions.is_empty() {
            return Err(RenderError::InvalidPlan {
                reason: "a list has no metrics or dimensions".into(),
            });
        }
        let base = self.ctx.entity(&self.plan.entity)?;
        let mut wanted = vec![format!("{}.{}", base.name, base.key)];
        wanted.extend(
            base.display_attribute
                .iter()
                .chain(&base.list_attributes)
                .map(|d| format!("{}.{d}", base.name)),
        );
        wanted.extend(self.plan.columns.iter().cloned());
        for o in &self.plan.order {
            match &o.key {
                OrderKey::Attribute { attribute } => wanted.push(attribute.clone()),
                OrderKey::Metric { .. } => {
                    return Err(RenderError::InvalidPlan {
                        reason: "a list cannot be sorted by a metric".into(),
                    });
                }
            }
        }
        let mut seen = Vec::new();
        wanted.retain(|w| {
            let fresh = !seen.contains(w);
            seen.push(w.clone());
            fresh
        });
        let mut selected = Vec::new();
        for q in &wanted {
            let (attr, expr) = self.attribute_expr(q)?;
            let ty = attr.attribute.ty;
            selected.push(Selected {
                expr: self.dialect().output(expr, ty),
                alias: Ident::dotted(&[&attr.entity.name, &attr.attribute.name])?,
                column: OutputColumn {
                    name: q.clone(),
                    label: attr.attribute.name.replace('_', " "),
                    ty,
                    source: ColumnSource::Attribute { attribute: q.clone() },
                },
            });
        }
        let key = format!("{}.{}", base.name, base.key);
        let mut order = Vec::new();
        // the same terms by expression, for a limit kept with its ties only
        let ties = self.tie_limit();
        let mut order_exprs = Vec::new();
        let mut keys: Vec<(String, SortOrder)> = Vec::new();
        for o in &self.plan.order {
            if let OrderKey::Attribute { attribute } = &o.key {
                keys.push((attribute.clone(), o.order));
            }
        }
        if !keys.iter().any(|(a, _)| *a == key) {
            keys.push((key, SortOrder::Asc));
        }
        // the leading sort terms that say which rows tie (the first key, with the date an
        // age counts from)
        let mut tie_keys = 0;
        for (attribute, dir) in keys {
            let i = wanted
                .iter()
                .position(|w| *w == attribute)
                .expect("sort attributes are selected");
            let (attr, expr) = self.attribute_expr(&attribute)?;
            if ties.is_some() {
                order_exprs.push(self.expr_term(expr.clone(), attr.attribute.ty, dir));
            }
            order.push(self.sort_term(&selected[i].alias, expr, attr.attribute.ty, dir));
            // "the 10 oldest patients": whole years tie, the date they count from does
            // not — the older first among those of one age
            if let Some(Derived::YearsBetween {
                from: DateOperand::Attribute(from),
                to: DateOperand::Today,
            }) = &attr.attribute.derived
            {
                let from = format!("{}.{from}", attr.entity.name);
                let (_, mut term) = self.attribute_expr(&from)?;
                term.push(dir_sql(match dir {
                    SortOrder::Asc => SortOrder::Desc,
                    SortOrder::Desc => SortOrder::Asc,
                }));
                if ties.is_some() {
                    order_exprs.push(term.clone());
                }
                order.push(term);
            }
            if tie_keys == 0 {
                tie_keys = order_exprs.len();
            }
        }
        if let Some(n) = ties {
            return self.with_ties(
                n,
                Vec::new(),
                selected,
                conds,
                Vec::new(),
                None,
                order_exprs,
                tie_keys,
            );
        }
        Ok(self.assemble(Vec::new(), selected, conds, Vec::new(), None, order))
    }

    /// The plan's limit when its ties are kept too ("top 5, ties included").
    fn tie_limit(&self) -> Option<u32> {
        self.plan
            .limit
            .filter(|&n| n > 0 && self.plan.limit_ties && self.plan.offset.is_none_or(|o| o == 0))
    }

    /// A sort term by its expression (a window's order cannot name output aliases): text
    /// with the byte-order collation.
    fn expr_term(&self, expr: Sql, ty: AttributeType, dir: SortOrder) -> Sql {
        let mut s = if ty == AttributeType::Text {
            self.dialect().sort_key(expr, ty)
        } else {
            expr
        };
        s.push(dir_sql(dir));
        s
    }

    /// The rows up to the `n`th in the plan's order and every row tied with it on the
    /// first `tie_keys` sort terms (the first key; an age with the date it counts from)
    /// ("top 5 clinics, ties included"):
    ///
    /// `SELECT … FROM (SELECT …, RANK() OVER (ORDER BY first key) AS tie_rank,
    /// ROW_NUMBER() OVER (ORDER BY every key) AS tie_row FROM … [GROUP BY …]) AS tied WHERE
    /// tie_rank <= n ORDER BY tie_row` — the same text in SQLite and PostgreSQL.
    #[allow(clippy::too_many_arguments)]
    fn with_ties(
        &mut self,
        n: u32,
        ctes: Vec<(Ident, Sql)>,
        mut selected: Vec<Selected>,
        conds: &[Sql],
        group_by: Vec<Sql>,
        having: Option<Sql>,
        order_exprs: Vec<Sql>,
        tie_keys: usize,
    ) -> Result<(Sql, Vec<OutputColumn>), RenderError> {
        if order_exprs.is_empty() || tie_keys == 0 {
            return Err(RenderError::InvalidPlan {
                reason: "rows tied with the last one need an order".into(),
            });
        }
        let first = Sql::join(
            order_exprs[..tie_keys.min(order_exprs.len())].iter().cloned(),
            ", ",
        );
        let outer: Vec<Ident> = selected.iter().map(|s| s.alias.clone()).collect();
        let rank_alias = Ident::new("tie_rank")?;
        let row_alias = Ident::new("tie_row")?;
        let mut rank = Sql::text("RANK() OVER (ORDER BY ");
        rank.push_sql(first).push(")");
        let mut row = Sql::text("ROW_NUMBER() OVER (ORDER BY ");
        row.push_sql(Sql::join(order_exprs, ", ")).push(")");
        for (expr, alias) in [(rank, rank_alias.clone()), (row, row_alias.clone())] {
            selected.push(Selected {
                expr,
                alias: alias.clone(),
                column: OutputColumn {
                    name: alias.as_str().to_owned(),
                    label: alias.as_str().to_owned(),
                    ty: AttributeType::Integer,
                    source: ColumnSource::RowCount,
                },
            });
        }
        let (inner, mut columns) = self.assemble(ctes, selected, conds, group_by, having, Vec::new());
        columns.truncate(columns.len() - 2);
        let mut s = rows_ranked_up_to(&outer, inner, &Ident::new("tied")?, &rank_alias, n);
        s.push("\nORDER BY ").push_ident(&row_alias);
        self.tied = true;
        Ok((s, columns))
    }

    /// A sort term: text by its expression (with the byte-order collation), anything
    /// else by its output alias.
    fn sort_term(&self, alias: &Ident, expr: Sql, ty: AttributeType, dir: SortOrder) -> Sql {
        let mut s = if ty == AttributeType::Text && self.dialect().text_sort_collation().is_some() {
            self.dialect().sort_key(expr, ty)
        } else {
            let mut a = Sql::new();
            a.push_ident(alias);
            a
        };
        s.push(dir_sql(dir));
        s
    }

    fn aggregate(&mut self, conds: &[Sql]) -> Result<(Sql, Vec<OutputColumn>), RenderError> {
        if let Some(rolled_up) = self.counts_by_period(conds)? {
            return Ok(rolled_up);
        }
        let d = self.dialect();
        let mut dims: Vec<(Selected, AttributeType, String)> = Vec::new();
        for dim in &self.plan.dimensions {
            let (qualified, grain) = match dim {
                Dimension::Attribute { attribute } => (attribute, None),
                Dimension::Time { attribute, grain } => (attribute, Some(*grain)),
            };
            let (attr, expr) = self.attribute_expr(qualified)?;
            let (expr, alias, label, source, sql_ty) = match grain {
                None => (
                    d.output(expr, attr.attribute.ty),
                    Ident::dotted(&[&attr.entity.name, &attr.attribute.name])?,
                    attr.attribute.name.replace('_', " "),
                    ColumnSource::Attribute {
                        attribute: qualified.clone(),
                    },
                    if attr.attribute.ty == AttributeType::Date {
                        AttributeType::Text
                    } else {
                        attr.attribute.ty
                    },
                ),
                Some(g) => {
                    require_type(attr, AttributeType::Date)?;
                    (
                        d.truncate_date(expr, g),
                        Ident::dotted(&[&attr.entity.name, &attr.attribute.name, g.as_str()])?,
                        format!("{} ({})", attr.attribute.name.replace('_', " "), g.as_str()),
                        ColumnSource::Bucket {
                            attribute: qualified.clone(),
                            grain: g,
                        },
                        AttributeType::Text,
                    )
                }
            };
            let ty = attr.attribute.ty;
            let name = alias.as_str().to_owned();
            if dims.iter().any(|(s, _, _)| s.alias == alias) {
                return Err(RenderError::InvalidPlan {
                    reason: format!("dimension {name} appears twice"),
                });
            }
            dims.push((
                Selected {
                    expr,
                    alias,
                    column: OutputColumn {
                        name,
                        label,
                        ty,
                        source,
                    },
                },
                sql_ty,
                qualified.clone(),
            ));
        }

        let keys = self.group_keys(&dims)?;

        let mut metrics: Vec<(MetricSql, Ident, OutputColumn)> = Vec::new();
        if self.plan.metrics.is_empty() {
            let alias = Ident::new("row_count")?;
            let column = OutputColumn {
                name: "row_count".into(),
                label: "Count".into(),
                ty: AttributeType::Integer,
                source: ColumnSource::RowCount,
            };
            metrics.push((MetricSql::Aggregate(Sql::text("COUNT(*)")), alias, column));
        }
        for (i, m) in self.plan.metrics.iter().enumerate() {
            let (sql, ty) = self.metric(m)?;
            let alias = Ident::new(&format!("metric_{i}"))?;
            let column = OutputColumn {
                name: alias.as_str().to_owned(),
                label: m.label.clone(),
                ty,
                source: ColumnSource::Metric { index: i },
            };
            metrics.push((sql, alias, column));
        }

        // SQLite has no median: one CTE per median, ranked with window functions.
        let mut ctes = Vec::new();
        let mut selected: Vec<Selected> = dims
            .iter()
            .map(|(s, _, _)| Selected {
                expr: s.expr.clone(),
                alias: s.alias.clone(),
                column: s.column.clone(),
            })
            .collect();
        let mut having = None;
        if let Some(h) = self.plan.having {
            if dims.is_empty() {
                return Err(RenderError::InvalidPlan {
                    reason: "a condition on groups needs a grouping".into(),
                });
            }
            let Some((MetricSql::Aggregate(e), _, _)) = metrics.first() else {
                return Err(RenderError::InvalidPlan {
                    reason: "groups can be kept by a count, sum, average, minimum or maximum only".into(),
                });
            };
            having = Some(having_sql(e, &h)?);
        }
        for (sql, alias, column) in metrics {
            let expr = match sql {
                MetricSql::Aggregate(e) => e,
                MetricSql::Median { input } => {
                    let cte = Ident::new(&format!("median_{}", ctes.len()))?;
                    let dim_exprs: Vec<Sql> = dims.iter().map(|(s, _, _)| s.expr.clone()).collect();
                    ctes.push((cte.clone(), self.median_cte(&dim_exprs, input, conds)?));
                    let lookup = self.median_lookup(&cte, &dim_exprs)?;
                    d.output(lookup, AttributeType::Real)
                }
            };
            // "rounded to 1 decimal": real figures only (counts are whole already)
            let expr = match self.plan.round {
                Some(places) if column.ty == AttributeType::Real => d.round(expr, places),
                _ => expr,
            };
            selected.push(Selected { expr, alias, column });
        }

        let mut group_by: Vec<Sql> = dims.iter().map(|(s, _, _)| s.expr.clone()).collect();
        for (k, raw) in keys {
            group_by.push(raw);
            selected.push(k);
        }
        let mut order = Vec::new();
        // the same terms by expression, for a limit kept with its ties only
        let ties = self
            .tie_limit()
            .filter(|_| !dims.is_empty() && self.plan.limit_per_group.is_none());
        let mut order_exprs = Vec::new();
        let mut used_dims = Vec::new();
        let plan_order = self.effective_order();
        for (key, dir) in plan_order {
            match key {
                OrderKey::Metric { index } => {
                    let i = index as usize;
                    if i >= self.plan.metrics.len() {
                        return Err(RenderError::InvalidPlan {
                            reason: format!("no metric {i} to sort by"),
                        });
                    }
                    let s = &selected[dims.len() + i];
                    if ties.is_some() {
                        order_exprs.push(self.expr_term(s.expr.clone(), AttributeType::Real, dir));
                    }
                    order.push(self.sort_term(&s.alias, Sql::new(), AttributeType::Real, dir));
                }
                OrderKey::Attribute { attribute } => {
                    let Some(j) = dims.iter().position(|(_, _, q)| *q == attribute) else {
                        return Err(RenderError::InvalidPlan {
                            reason: format!("cannot sort groups by {attribute}: it is not a dimension"),
                        });
                    };
                    let (s, sql_ty, _) = &dims[j];
                    if ties.is_some() {
                        order_exprs.push(self.expr_term(s.expr.clone(), *sql_ty, dir));
                    }
                    order.push(self.sort_term(&s.alias, s.expr.clone(), *sql_ty, dir));
                    used_dims.push(j);
                }
            }
        }
        for (j, (s, sql_ty, _)) in dims.iter().enumerate() {
            if !used_dims.contains(&j) {
                if ties.is_some() {
                    order_exprs.push(self.expr_term(s.expr.clone(), *sql_ty, SortOrder::Asc));
                }
                order.push(self.sort_term(&s.alias, s.expr.clone(), *sql_ty, SortOrder::Asc));
            }
        }
        if let Some(n) = self.plan.limit_per_group {
            return self.per_group(n, ctes, selected, &dims, conds, group_by, having);
        }
        if let Some(n) = ties {
            return self.with_ties(n, ctes, selected, conds, group_by, having, order_exprs, 1);
        }
        Ok(self.assemble(ctes, selected, conds, group_by, having, order))
    }

    /// The keys of the records the groupings name by their label (`clinics.name` →
    /// `clinics.id`), unless a grouping is that key already: selected after the metrics
    /// and grouped by, so namesakes are separate groups and each group says which record
    /// it is.
    fn group_keys(
        &mut self,
        dims: &[(Selected, AttributeType, String)],
    ) -> Result<Vec<(Selected, Sql)>, RenderError> {
        let mut keys = Vec::new();
        for dim in &self.plan.dimensions {
            let Dimension::Attribute { attribute } = dim else {
                continue;
            };
            let attr = self.ctx.attribute(attribute)?;
            let entity = attr.entity;
            if entity.display_attribute.as_deref() != Some(attr.attribute.name.as_str())
                || entity.key == attr.attribute.name
            {
                continue;
            }
            let qualified = format!("{}.{}", entity.name, entity.key);
            if dims.iter().any(|(_, _, q)| *q == qualified) {
                continue;
            }
            let (key, expr) = self.attribute_expr(&qualified)?;
            let ty = key.attribute.ty;
            let alias = Ident::dotted(&[&key.entity.name, &key.attribute.name])?;
            if keys.iter().any(|(k, _): &(Selected, Sql)| k.alias == alias) {
                continue;
            }
            keys.push((
                Selected {
                    expr: self.dialect().output(expr.clone(), ty),
                    column: OutputColumn {
                        name: alias.as_str().to_owned(),
                        label: format!("{} {}", key.entity.name, key.attribute.name),
                        ty,
                        source: ColumnSource::GroupKey { attribute: qualified },
                    },
                    alias,
                },
                expr,
            ));
        }
        Ok(keys)
    }

    /// The plan's sort keys; a ranking without any sorts by its first metric, largest
    /// first.
    fn effective_order(&self) -> Vec<(OrderKey, SortOrder)> {
        let mut order: Vec<(OrderKey, SortOrder)> =
            self.plan.order.iter().map(|o| (o.key.clone(), o.order)).collect();
        if order.is_empty() && self.plan.intent == Intent::Rank && !self.plan.metrics.is_empty() {
            order.push((OrderKey::Metric { index: 0 }, SortOrder::Desc));
        }
        order
    }

    /// A ranking kept within each group (`limit_per_group`): the grouped rows numbered
    /// within each group of the dimensions after the first, by the plan's first order key
    /// (a metric), then by the ranked value; the rows numbered up to `n` kept.
    ///
    /// `SELECT … FROM (SELECT …, ROW_NUMBER() OVER (PARTITION BY groups ORDER BY metric,
    /// ranked) AS group_rank FROM … GROUP BY …) AS ranked WHERE group_rank <= n` — the same
    /// text in SQLite and PostgreSQL.
    #[allow(clippy::too_many_arguments)]
    fn per_group(
        &self,
        n: u32,
        ctes: Vec<(Ident, Sql)>,
        mut selected: Vec<Selected>,
        dims: &[(Selected, AttributeType, String)],
        conds: &[Sql],
        group_by: Vec<Sql>,
        having: Option<Sql>,
    ) -> Result<(Sql, Vec<OutputColumn>), RenderError> {
        let invalid = |reason: &str| RenderError::InvalidPlan {
            reason: reason.to_owned(),
        };
        if dims.len() < 2 {
            return Err(invalid(
                "a ranking within each group needs the ranked value and a grouping",
            ));
        }
        if n == 0 || !ctes.is_empty() {
            return Err(invalid(
                "a ranking within each group needs a count, sum, average, minimum or maximum",
            ));
        }
        let Some(OrderBy {
            key: OrderKey::Metric { index },
            order: dir,
        }) = self.plan.order.first()
        else {
            return Err(invalid("a ranking within each group is ranked by its figure"));
        };
        let Some(metric) = selected.get(dims.len() + *index as usize) else {
            return Err(invalid("no figure to rank the rows within each group by"));
        };
        let d = self.dialect();
        let mut window = Sql::text("ROW_NUMBER() OVER (PARTITION BY ");
        window.push_sql(Sql::join(dims[1..].iter().map(|(s, _, _)| s.expr.clone()), ", "));
        window
            .push(" ORDER BY ")
            .push_sql(metric.expr.clone())
            .push(dir_sql(*dir))
            .push(", ")
            .push_sql(d.sort_key(dims[0].0.expr.clone(), dims[0].1))
            .push(" ASC NULLS LAST)");
        let rank_alias = Ident::new("group_rank")?;
        let outer: Vec<(Ident, AttributeType)> =
            selected.iter().map(|s| (s.alias.clone(), s.column.ty)).collect();
        selected.push(Selected {
            expr: window,
            alias: rank_alias.clone(),
            column: OutputColumn {
                name: "group_rank".into(),
                label: "Rank in group".into(),
                ty: AttributeType::Integer,
                source: ColumnSource::RowCount,
            },
        });
        let (inner, mut columns) = self.assemble(ctes, selected, conds, group_by, having, Vec::new());
        columns.pop();
        let aliases: Vec<Ident> = outer.iter().map(|(a, _)| a.clone()).collect();
        let mut s = rows_ranked_up_to(&aliases, inner, &Ident::new("ranked")?, &rank_alias, n);
        // the groups in order, each group's rows in rank order
        let by_alias = |j: usize, dir: SortOrder| {
            let (alias, ty) = &outer[j];
            let mut c = Sql::new();
            c.push_ident(alias);
            let ty = if *ty == AttributeType::Date {
                AttributeType::Text
            } else {
                *ty
            };
            let mut c = d.sort_key(c, ty);
            c.push(dir_sql(dir));
            c
        };
        let mut order: Vec<Sql> = (1..dims.len()).map(|j| by_alias(j, SortOrder::Asc)).collect();
        order.push(by_alias(dims.len() + *index as usize, *dir));
        order.push(by_alias(0, SortOrder::Asc));
        s.push("\nORDER BY ").push_sql(Sql::join(order, ", "));
        Ok((s, columns))
    }

    /// Row counts by a period of the plan entity's own date column ("assessments per
    /// month"), counted per day first and the days then summed per period:
    ///
    /// ```sql
    /// WITH "per_day" AS (SELECT "a"."d" AS "day", COUNT(*) AS "n" FROM … WHERE … GROUP BY "a"."d")
    /// SELECT <period of "per_day"."day">, SUM("per_day"."n") FROM "per_day" GROUP BY <period> …
    /// ```
    ///
    /// The same groups and counts as `GROUP BY <period of "a"."d">` (a period is a
    /// function of the day; a null date is a group of its own either way), but the
    /// inner grouping follows an index on the date in order, without sorting every row
    /// by its period: 490k assessments of 2026 by month, 10× data, 528 → 52 ms on
    /// SQLite, 264 → 60 ms on PostgreSQL. `None` when the plan is not that shape (one
    /// period dimension of a column of the plan's entity, only plain row counts, no
    /// condition but a range of that column).
    fn counts_by_period(&mut self, conds: &[Sql]) -> Result<Option<(Sql, Vec<OutputColumn>)>, RenderError> {
        let [Dimension::Time { attribute, grain }] = self.plan.dimensions.as_slice() else {
            return Ok(None);
        };
        if *grain == Grain::Day {
            return Ok(None); // a day is its own period: nothing to sum
        }
        let plain_count =
            |m: &Metric| m.agg == MeasureAgg::Count && m.attribute.is_none() && m.condition.is_none();
        if !self.plan.metrics.iter().all(plain_count) || self.plan.per_record.is_some() {
            return Ok(None);
        }
        // only the period's own column is constrained: a condition on another column
        // (or the user's row scope) would make SQLite read every row of the range by
        // the date index to group in order, slower than one scan of the table
        // ("assessments with infection signs this year vs last year": 170 ms → 1.4 s)
        let own_range = self
            .plan
            .time_range
            .as_ref()
            .is_none_or(|r| r.attribute == *attribute);
        if !self.plan.filters.is_empty()
            || !own_range
            || self.ctx.rows.constraint(&self.plan.entity)?.is_some()
        {
            return Ok(None);
        }
        let attr = self.ctx.attribute(attribute)?;
        if attr.entity.name != self.plan.entity || attr.attribute.column.is_none() {
            return Ok(None);
        }
        require_type(attr, AttributeType::Date)?;
        let d = self.dialect();
        let (_, day) = self.attribute_expr(attribute)?;
        let cte = Ident::new("per_day")?;
        let (day_col, n_col) = (Ident::new("day")?, Ident::new("n")?);

        let period = d.truncate_date(Sql::column(&cte, &day_col), *grain);
        let dim_alias = Ident::dotted(&[&attr.entity.name, &attr.attribute.name, grain.as_str()])?;
        let mut selected = vec![Selected {
            expr: period.clone(),
            alias: dim_alias.clone(),
            column: OutputColumn {
                name: dim_alias.as_str().to_owned(),
                label: format!("{} ({})", attr.attribute.name.replace('_', " "), grain.as_str()),
                ty: attr.attribute.ty,
                source: ColumnSource::Bucket {
                    attribute: attribute.clone(),
                    grain: *grain,
                },
            },
        }];
        let mut total = Sql::text("SUM(");
        total.push_sql(Sql::column(&cte, &n_col)).push(")");
        if self.plan.metrics.is_empty() {
            selected.push(Selected {
                expr: d.output(total.clone(), AttributeType::Integer),
                alias: Ident::new("row_count")?,
                column: OutputColumn {
                    name: "row_count".into(),
                    label: "Count".into(),
                    ty: AttributeType::Integer,
                    source: ColumnSource::RowCount,
                },
            });
        }
        for (i, m) in self.plan.metrics.iter().enumerate() {
            let alias = Ident::new(&format!("metric_{i}"))?;
            selected.push(Selected {
                expr: d.output(total.clone(), AttributeType::Integer),
                column: OutputColumn {
                    name: alias.as_str().to_owned(),
                    label: m.label.clone(),
                    ty: AttributeType::Integer,
                    source: ColumnSource::Metric { index: i },
                },
                alias,
            });
        }
        let having = match self.plan.having {
            Some(h) => Some(having_sql(&total, &h)?),
            None => None,
        };
        // the same order as the general shape: the plan's keys, then the period ascending
        let mut order = Vec::new();
        let mut period_sorted = false;
        let plan_order = self.effective_order();
        for (key, dir) in plan_order {
            match key {
                OrderKey::Metric { index } => {
                    let Some(s) = selected
                        .get(1 + index as usize)
                        .filter(|_| (index as usize) < self.plan.metrics.len())
                    else {
                        return Err(RenderError::InvalidPlan {
                            reason: format!("no metric {index} to sort by"),
                        });
                    };
                    order.push(self.sort_term(&s.alias, Sql::new(), AttributeType::Real, dir));
                }
                OrderKey::Attribute { attribute: a } if a == *attribute => {
                    order.push(self.sort_term(&dim_alias, period.clone(), AttributeType::Text, dir));
                    period_sorted = true;
                }
                OrderKey::Attribute { attribute: a } => {
                    return Err(RenderError::InvalidPlan {
                        reason: format!("cannot sort groups by {a}: it is not a dimension"),
                    });
                }
            }
        }
        if !period_sorted {
            order.push(self.sort_term(&dim_alias, period.clone(), AttributeType::Text, SortOrder::Asc));
        }

        let mut inner = Sql::text("SELECT ");
        inner
            .push_sql(day.clone())
            .push(" AS ")
            .push_ident(&day_col)
            .push(", COUNT(*) AS ")
            .push_ident(&n_col)
            .push_sql(self.source_sql(conds))
            .push("\nGROUP BY ")
            .push_sql(day);
        let mut s = Sql::text("WITH ");
        s.push_ident(&cte)
            .push(" AS (")
            .push_sql(inner)
            .push(")\nSELECT ");
        let columns = push_select_list(&mut s, selected);
        s.push("\nFROM ")
            .push_ident(&cte)
            .push("\nGROUP BY ")
            .push_sql(period);
        if let Some(h) = having {
            s.push("\nHAVING ").push_sql(h);
        }
        s.push("\nORDER BY ").push_sql(Sql::join(order, ", "));
        Ok(Some((s, columns)))
    }

    /// One metric's aggregate and its output type.
    /// `(SELECT MAX(v) FROM related … WHERE correlated)`: the extreme of a related
    /// entity's attribute over the rows of the plan's record (`per_record`).
    fn per_record_expr(
        &mut self,
        qualified: &str,
        inner: MeasureAgg,
    ) -> Result<(AttributeRef<'m>, Sql), RenderError> {
        let attr = self.ctx.attribute(qualified)?;
        let f = match inner {
            MeasureAgg::Max => "MAX(",
            MeasureAgg::Min => "MIN(",
            other => {
                return Err(RenderError::InvalidPlan {
                    reason: format!("a per-record {} is not supported", other.as_str()),
                });
            }
        };
        if !attr.attribute.ty.is_ordered() {
            return Err(RenderError::NotOrdered {
                attribute: attr.qualified(),
            });
        }
        let route = self.ctx.join_path(&self.plan.entity, &attr.entity.name)?;
        let base = self.scope.alias_for(&mut self.ctx, &[])?;
        let sub = correlated(&mut self.ctx, &base, &route)?;
        let v = attr_expr(&mut self.ctx, &sub.last, attr)?;
        let mut s = Sql::text("(SELECT ");
        s.push(f).push_sql(v).push(") FROM ");
        s.push_sql(sub.from)
            .push(" WHERE ")
            .push_sql(sub.correlation)
            .push(")");
        Ok((attr, s))
    }

    fn metric(&mut self, m: &Metric) -> Result<(MetricSql, AttributeType), RenderError> {
        let d = self.dialect();
        let value = match &m.attribute {
            // "each wound's largest area": per record first, when the attribute has many
            // rows per record
            Some(q)
                if self.plan.per_record.is_some()
                    && self
                        .ctx
                        .attribute(q)
                        .and_then(|a| self.ctx.join_path(&self.plan.entity, &a.entity.name))
                        .is_ok_and(|route| first_fan_out(&route).is_some()) =>
            {
                let inner = self.plan.per_record.unwrap_or(MeasureAgg::Max);
                Some(self.per_record_expr(q, inner)?)
            }
            Some(q) => Some(self.attribute_expr(q)?),
            None => None,
        };
        let cond = match &m.condition {
            Some(c) => {
                let pred = lower(&self.ctx, &self.plan.entity, c)?;
                let conds = render_conjunction(&mut self.ctx, &mut self.scope, vec![pred])?;
                Some(and_all(&self.ctx, conds))
            }
            None => None,
        };
        let when = |then: Sql| -> Sql {
            match &cond {
                Some(c) => {
                    let mut s = Sql::text("CASE WHEN ");
                    s.push_sql(c.clone()).push(" THEN ").push_sql(then).push(" END");
                    s
                }
                None => then,
            }
        };
        let call = |f: &'static str, arg: Sql| -> Sql {
            let mut s = Sql::text(f);
            s.push_sql(arg).push(")");
            s
        };
        let need_value = |what: &str| RenderError::InvalidPlan {
            reason: format!("{what} needs an attribute"),
        };
        let numeric = |attr: &AttributeRef<'_>| -> Result<(), RenderError> {
            if attr.attribute.ty.is_numeric() {
                Ok(())
            } else {
                Err(RenderError::TypeMismatch {
                    attribute: attr.qualified(),
                    expected: AttributeType::Real,
                    found: attr.attribute.ty.as_str(),
                })
            }
        };
        Ok(match m.agg {
            MeasureAgg::Count => {
                let arg = match (&value, &cond) {
                    (None, None) => Sql::text("*"),
                    (None, Some(_)) => when(Sql::text("1")),
                    (Some((_, v)), _) => when(v.clone()),
                };
                (MetricSql::Aggregate(call("COUNT(", arg)), AttributeType::Integer)
            }
            MeasureAgg::CountDistinct => {
                let (_, v) = value.as_ref().ok_or_else(|| need_value("count_distinct"))?;
                let mut s = Sql::text("COUNT(DISTINCT ");
                s.push_sql(when(v.clone())).push(")");
                (MetricSql::Aggregate(s), AttributeType::Integer)
            }
            MeasureAgg::Sum | MeasureAgg::Avg | MeasureAgg::Median => {
                let (attr, v) = value.as_ref().ok_or_else(|| need_value(m.agg.as_str()))?;
                numeric(attr)?;
                let input = when(v.clone());
                match m.agg {
                    MeasureAgg::Sum => {
                        let ty = attr.attribute.ty;
                        (MetricSql::Aggregate(d.output(call("SUM(", input), ty)), ty)
                    }
                    MeasureAgg::Avg => (
                        MetricSql::Aggregate(d.output(call("AVG(", input), AttributeType::Real)),
                        AttributeType::Real,
                    ),
                    _ => match d.median(input.clone()) {
                        Some(median) => (
                            MetricSql::Aggregate(d.output(median, AttributeType::Real)),
                            AttributeType::Real,
                        ),
                        None => (MetricSql::Median { input }, AttributeType::Real),
                    },
                }
            }
            MeasureAgg::Min | MeasureAgg::Max => {
                let (attr, v) = value.as_ref().ok_or_else(|| need_value(m.agg.as_str()))?;
                let ty = attr.attribute.ty;
                if !ty.is_ordered() {
                    return Err(RenderError::NotOrdered {
                        attribute: attr.qualified(),
                    });
                }
                let f = if m.agg == MeasureAgg::Min { "MIN(" } else { "MAX(" };
                (MetricSql::Aggregate(d.output(call(f, when(v.clone())), ty)), ty)
            }
            MeasureAgg::Share => {
                let Some(c) = &cond else {
                    return Err(RenderError::InvalidPlan {
                        reason: "a share needs a condition".into(),
                    });
                };
                let (hit, all) = match &value {
                    Some((_, v)) => (v.clone(), v.clone()),
                    None => (Sql::text("1"), Sql::text("*")),
                };
                let mut s = Sql::text("100.0 * COUNT(CASE WHEN ");
                s.push_sql(c.clone())
                    .push(" THEN ")
                    .push_sql(hit)
                    .push(" END) / NULLIF(COUNT(");
                s.push_sql(all).push("), 0)");
                (
                    MetricSql::Aggregate(d.output(s, AttributeType::Real)),
                    AttributeType::Real,
                )
            }
        })
    }

    /// `SELECT k…, AVG(v)` over the middle one or two rows of each group (SQLite).
    fn median_cte(&self, dims: &[Sql], input: Sql, conds: &[Sql]) -> Result<Sql, RenderError> {
        let keys: Vec<Ident> = (0..dims.len())
            .map(|i| Ident::new(&format!("k{i}")))
            .collect::<Result<_, _>>()?;
        let partition = || {
            if dims.is_empty() {
                Sql::new()
            } else {
                let mut p = Sql::text("PARTITION BY ");
                p.push_sql(Sql::join(dims.iter().cloned(), ", "));
                p
            }
        };
        let key_list = || {
            Sql::join(
                keys.iter().map(|k| {
                    let mut s = Sql::new();
                    s.push_ident(k);
                    s
                }),
                ", ",
            )
        };
        let mut inner = Sql::text("SELECT ");
        for (expr, key) in dims.iter().zip(&keys) {
            inner
                .push_sql(expr.clone())
                .push(" AS ")
                .push_ident(key)
                .push(", ");
        }
        inner
            .push_sql(input.clone())
            .push(" AS \"v\", ROW_NUMBER() OVER (");
        let part = partition();
        if !part.is_empty() {
            inner.push_sql(part.clone()).push(" ");
        }
        inner
            .push("ORDER BY ")
            .push_sql(input.clone())
            .push(") AS \"rn\", COUNT(*) OVER (")
            .push_sql(part);
        inner.push(") AS \"n\"");
        let mut all_conds: Vec<Sql> = conds.to_vec();
        let mut not_null = input.parenthesized();
        not_null.push(" IS NOT NULL");
        all_conds.push(not_null);
        inner.push_sql(self.source_sql(&all_conds));

        let mut s = Sql::text("SELECT ");
        if !keys.is_empty() {
            s.push_sql(key_list()).push(", ");
        }
        s.push("AVG(\"v\") AS \"v\" FROM (").push_sql(inner);
        s.push(") AS \"ranked\" WHERE \"rn\" IN ((\"n\" + 1) / 2, (\"n\" + 2) / 2)");
        if !keys.is_empty() {
            s.push(" GROUP BY ").push_sql(key_list());
        }
        Ok(s)
    }

    /// `(SELECT v FROM median_i WHERE k0 IS NOT DISTINCT FROM dim0 AND …)`: the group's
    /// median (null-safe: a null group key matches its own row).
    fn median_lookup(&self, cte: &Ident, dims: &[Sql]) -> Result<Sql, RenderError> {
        let m = Ident::new("m")?;
        let mut s = Sql::text("(SELECT ");
        s.push_ident(&m)
            .push(".\"v\" FROM ")
            .push_ident(cte)
            .push(" AS ")
            .push_ident(&m);
        for (i, expr) in dims.iter().enumerate() {
            s.push(if i == 0 { " WHERE " } else { " AND " });
            s.push_sql(Sql::column(&m, &Ident::new(&format!("k{i}"))?))
                .push(" IS NOT DISTINCT FROM ")
                .push_sql(expr.clone());
        }
        s.push(")");
        if dims.is_empty() {
            // Without GROUP BY, a select list with no aggregate would return one row
            // per base row; the lookup is constant, so any aggregate of it is the median.
            let mut one = Sql::text("MAX(");
            one.push_sql(s).push(")");
            return Ok(one);
        }
        Ok(s)
    }

    fn assemble(
        &self,
        ctes: Vec<(Ident, Sql)>,
        selected: Vec<Selected>,
        conds: &[Sql],
        group_by: Vec<Sql>,
        having: Option<Sql>,
        order: Vec<Sql>,
    ) -> (Sql, Vec<OutputColumn>) {
        let mut s = Sql::new();
        if !ctes.is_empty() {
            s.push("WITH ");
            for (i, (name, body)) in ctes.into_iter().enumerate() {
                if i > 0 {
                    s.push(",\n");
                }
                s.push_ident(&name).push(" AS (").push_sql(body).push(")");
            }
            s.push("\n");
        }
        s.push("SELECT ");
        let columns = push_select_list(&mut s, selected);
        s.push_sql(self.source_sql(conds));
        if !group_by.is_empty() {
            s.push("\nGROUP BY ").push_sql(Sql::join(group_by, ", "));
        }
        if let Some(h) = having {
            s.push("\nHAVING ").push_sql(h);
        }
        if !order.is_empty() {
            s.push("\nORDER BY ").push_sql(Sql::join(order, ", "));
        }
        (s, columns)
    }
}

#[cfg(test)]
mod tests;

/// The direction of a sort term; missing values last either way.
fn dir_sql(dir: SortOrder) -> &'static str {
    match dir {
        SortOrder::Asc => " ASC NULLS LAST",
        SortOrder::Desc => " DESC NULLS LAST",
    }
}

/// `SELECT <aliases> FROM (<inner>) AS <name> WHERE <rank> <= n`: the rows of a
/// statement that numbers them (`inner` selects `rank` after `aliases`), up to `n`.
fn rows_ranked_up_to(aliases: &[Ident], inner: Sql, name: &Ident, rank: &Ident, n: u32) -> Sql {
    let mut s = Sql::text("SELECT ");
    s.push_sql(Sql::join(
        aliases.iter().map(|a| {
            let mut c = Sql::new();
            c.push_ident(a);
            c
        }),
        ", ",
    ));
    s.push("\nFROM (")
        .push_sql(inner)
        .push(") AS ")
        .push_ident(name)
        .push("\nWHERE ")
        .push_ident(rank)
        .push(" <= ")
        .push_param(BoundValue::Int(i64::from(n)));
    s
}

/// `<aggregate> op <number>`: a HAVING condition (a whole number bound as an integer).
fn having_sql(aggregate: &Sql, h: &crate::engine::plan::Having) -> Result<Sql, RenderError> {
    if !h.value.is_finite() {
        return Err(RenderError::InvalidPlan {
            reason: "the groups' condition needs a number".into(),
        });
    }
    let mut c = aggregate.clone();
    c.push(crate::sql::predicate::op_sql(h.op));
    if h.value.fract() == 0.0 && h.value.abs() < 1e15 {
        c.push_param(BoundValue::Int(h.value as i64));
    } else {
        c.push_param(BoundValue::Real(h.value));
    }
    Ok(c)
}
