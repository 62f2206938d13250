//! The guard for SQL text that did not come from the renderer (the optional LLM
//! backend, F23/F24): accept exactly one read-only `SELECT` over the model's tables.
//!
//! [`check`] refuses, with a reason: empty or oversized input, control characters,
//! any comment (comment syntax differs between backends — PostgreSQL nests block
//! comments, SQLite does not — so a comment can hide text from one parser but not
//! the other), more than one statement (sqlx runs every statement of a SQLite string),
//! anything but a query (`INSERT`, `PRAGMA`, `ATTACH`, `COPY`, `SET`, …), data-changing
//! CTEs, `SELECT … INTO`, `FOR UPDATE`/`FOR SHARE`, tables that are neither in the
//! model nor a CTE in scope (so no `sqlite_master`, `pg_catalog.*`, schema-qualified
//! names or table functions), columns that resolve to no model column or alias, and
//! every function not on the allow-list (pure scalar, aggregate and window functions;
//! `pg_*`, `lo_*`, `dblink*`, `setval`, `nextval`, `load_extension`, `readfile`,
//! `writefile`, … are named as forbidden).
//!
//! The guard is one layer: the warehouse still runs every statement on a read-only
//! connection with a time limit. This module must not execute SQL or rewrite it —
//! it only says yes or no.

use sqlparser::ast::{
    Expr, ObjectName, Query, Select, SelectItem, SetExpr, Statement, TableFactor, Visit, Visitor,
};
use sqlparser::keywords::Keyword;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Token, Tokenizer, Whitespace};
use std::collections::{HashMap, HashSet};
use std::ops::ControlFlow;

use super::dialect::Dialect;
use crate::semantic::SemanticModel;

/// The longest SQL text the guard looks at.
pub const MAX_SQL_BYTES: usize = 16 * 1024;

/// Why SQL text was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GuardError {
    #[error("the SQL text is empty")]
    Empty,
    #[error("the SQL text is {len} bytes; at most {max} are accepted")]
    TooLong { len: usize, max: usize },
    #[error("the SQL text contains a control character")]
    ControlCharacter,
    #[error("comments are not accepted in SQL text")]
    Comment,
    #[error("exactly one statement is accepted")]
    StackedStatements,
    #[error("the SQL text does not parse: {message}")]
    Parse { message: String },
    #[error("only SELECT queries are accepted, not {kind}")]
    NotASelect { kind: String },
    #[error("SELECT … INTO is not accepted")]
    SelectInto,
    #[error("FOR UPDATE / FOR SHARE is not accepted")]
    LockingClause,
    #[error("table {name:?} is not in the semantic model")]
    UnknownTable { name: String },
    #[error("column {name:?} is not in the semantic model")]
    UnknownColumn { name: String },
    #[error("function {name}() is forbidden")]
    ForbiddenFunction { name: String },
    #[error("function {name}() is not on the allow-list")]
    FunctionNotAllowed { name: String },
    #[error("table function {name} is not accepted")]
    TableFunction { name: String },
}

impl GuardError {
    /// A stable machine code.
    pub fn code(&self) -> &'static str {
        match self {
            GuardError::Empty => "empty",
            GuardError::TooLong { .. } => "too_long",
            GuardError::ControlCharacter => "control_character",
            GuardError::Comment => "comment",
            GuardError::StackedStatements => "stacked_statements",
            GuardError::Parse { .. } => "parse",
            GuardError::NotASelect { .. } => "not_a_select",
            GuardError::SelectInto => "select_into",
            GuardError::LockingClause => "locking_clause",
            GuardError::UnknownTable { .. } => "unknown_table",
            GuardError::UnknownColumn { .. } => "unknown_column",
            GuardError::ForbiddenFunction { .. } => "forbidden_function",
            GuardError::FunctionNotAllowed { .. } => "function_not_allowed",
            GuardError::TableFunction { .. } => "table_function",
        }
    }
}

/// Pure functions a query may call (lowercase). Everything else is refused.
const ALLOWED_FUNCTIONS: &[&str] = &[
    // aggregates
    "count",
    "sum",
    "avg",
    "min",
    "max",
    "total",
    "group_concat",
    "string_agg",
    "percentile_cont",
    "percentile_disc",
    "bool_and",
    "bool_or",
    "every",
    "stddev",
    "stddev_samp",
    "stddev_pop",
    "variance",
    // window functions
    "row_number",
    "rank",
    "dense_rank",
    "percent_rank",
    "cume_dist",
    "ntile",
    "lag",
    "lead",
    "first_value",
    "last_value",
    "nth_value",
    // conditionals and numbers
    "coalesce",
    "ifnull",
    "nullif",
    "iif",
    "greatest",
    "least",
    "round",
    "abs",
    "ceil",
    "ceiling",
    "floor",
    "sign",
    "trunc",
    "mod",
    "power",
    "sqrt",
    "cast",
    "typeof",
    // text
    "lower",
    "upper",
    "length",
    "char_length",
    "substr",
    "substring",
    "trim",
    "ltrim",
    "rtrim",
    "replace",
    "instr",
    "strpos",
    "concat",
    "printf",
    "format",
    // dates
    "date",
    "time",
    "datetime",
    "strftime",
    "julianday",
    "date_trunc",
    "date_part",
    "extract",
    "to_char",
    "to_date",
    "make_date",
    "age",
    "current_date",
];

/// Functions with side effects or access outside the query (named so the refusal says so).
const FORBIDDEN_FUNCTIONS: &[&str] = &[
    "setval",
    "nextval",
    "currval",
    "lastval",
    "set_config",
    "current_setting",
    "load_extension",
    "readfile",
    "writefile",
    "edit",
    "fts3_tokenizer",
    "query_to_xml",
    "query_to_xml_and_xmlschema",
    "table_to_xml",
    "cursor_to_xml",
    "database_to_xml",
    "schema_to_xml",
    "version",
    "txid_current",
];

/// Prefixes of forbidden function families (`pg_read_file`, `lo_import`, `dblink_exec`, …).
const FORBIDDEN_PREFIXES: &[&str] = &["pg_", "lo_", "dblink", "sqlite_", "file_", "xpath"];

/// Checks SQL text that did not come from the renderer. `Ok(())` means: one `SELECT`
/// over the model's tables and columns, calling only allow-listed functions.
pub fn check(sql: &str, model: &SemanticModel, dialect: Dialect) -> Result<(), GuardError> {
    if sql.trim().is_empty() {
        return Err(GuardError::Empty);
    }
    if sql.len() > MAX_SQL_BYTES {
        return Err(GuardError::TooLong {
            len: sql.len(),
            max: MAX_SQL_BYTES,
        });
    }
    if sql
        .chars()
        .any(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t'))
    {
        return Err(GuardError::ControlCharacter);
    }
    let parser_dialect = dialect.parser_dialect();
    let tokens = Tokenizer::new(parser_dialect.as_ref(), sql)
        .tokenize()
        .map_err(|e| {
            // PostgreSQL nests block comments and SQLite does not: an unterminated one is
            // the comment trick, not a typo.
            if e.message.contains("comment") {
                GuardError::Comment
            } else {
                GuardError::Parse {
                    message: e.to_string(),
                }
            }
        })?;
    check_tokens(&tokens)?;
    // Refuse other statements by their first word even where the parser cannot read
    // them (`PRAGMA table_info(x)`, `VACUUM INTO …`).
    if let Some(Token::Word(word)) = tokens.iter().find(|t| !matches!(t, Token::Whitespace(_)))
        && !matches!(word.keyword, Keyword::SELECT | Keyword::WITH)
    {
        return Err(GuardError::NotASelect {
            kind: word.value.to_ascii_uppercase(),
        });
    }
    let statements = Parser::parse_sql(parser_dialect.as_ref(), sql).map_err(|e| GuardError::Parse {
        message: e.to_string(),
    })?;
    let [statement] = statements.as_slice() else {
        return Err(if statements.is_empty() {
            GuardError::Empty
        } else {
            GuardError::StackedStatements
        });
    };
    let Statement::Query(query) = statement else {
        return Err(GuardError::NotASelect {
            kind: statement_kind(statement),
        });
    };
    match query.body.as_ref() {
        SetExpr::Values(_) => {
            return Err(GuardError::NotASelect {
                kind: "VALUES".into(),
            });
        }
        SetExpr::Table(_) => return Err(GuardError::NotASelect { kind: "TABLE".into() }),
        _ => {}
    }
    let known = ModelNames::of(model);
    let mut names = Names::default();
    let _ = statement.visit(&mut names);
    // Structure and tables first, then functions, then columns: the refusal names the
    // most serious problem, not merely the first one in the text.
    for phase in [Phase::Structure, Phase::Functions, Phase::Columns] {
        let mut checker = Checker {
            phase,
            model: &known,
            names: &names,
            frames: Vec::new(),
        };
        if let ControlFlow::Break(e) = statement.visit(&mut checker) {
            return Err(e);
        }
    }
    Ok(())
}

/// What one pass of the checker looks at.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Statement kinds, `INTO`, locking clauses, tables, table functions, CTE scopes.
    Structure,
    /// Function calls against the allow-list.
    Functions,
    /// Column references against the model and the statement's own aliases.
    Columns,
}

/// No comments; a semicolon only as the very last token.
fn check_tokens(tokens: &[Token]) -> Result<(), GuardError> {
    let mut seen_semicolon = false;
    for t in tokens {
        match t {
            Token::Whitespace(Whitespace::SingleLineComment { .. } | Whitespace::MultiLineComment(_)) => {
                return Err(GuardError::Comment);
            }
            Token::Whitespace(_) | Token::EOF => {}
            Token::SemiColon if !seen_semicolon => seen_semicolon = true,
            _ if seen_semicolon => return Err(GuardError::StackedStatements),
            Token::SemiColon => return Err(GuardError::StackedStatements),
            _ => {}
        }
    }
    Ok(())
}

/// The statement's leading keyword(s), for the refusal message (`INSERT`, `PRAGMA`).
fn statement_kind(statement: &Statement) -> String {
    let text = statement.to_string();
    let words: Vec<&str> = text.split_whitespace().take(2).collect();
    match words.as_slice() {
        [first, second] if matches!(first.to_ascii_uppercase().as_str(), "CREATE" | "DROP" | "ALTER") => {
            format!("{} {}", first.to_ascii_uppercase(), second.to_ascii_uppercase())
        }
        [first, ..] => first.to_ascii_uppercase(),
        [] => "an empty statement".into(),
    }
}

/// Tables and columns of the model, lowercase.
struct ModelNames {
    tables: HashMap<String, HashSet<String>>,
    columns: HashSet<String>,
}

impl ModelNames {
    fn of(model: &SemanticModel) -> ModelNames {
        let mut tables: HashMap<String, HashSet<String>> = HashMap::new();
        let mut columns = HashSet::new();
        for e in &model.entities {
            let cols = tables.entry(e.table.to_lowercase()).or_default();
            for a in &e.attributes {
                if let Some(c) = &a.column {
                    cols.insert(c.to_lowercase());
                    columns.insert(c.to_lowercase());
                }
            }
        }
        ModelNames { tables, columns }
    }
}

/// Names the statement itself introduces: CTEs, table aliases (with the table they
/// stand for), column aliases. Collected in a first pass so that later references
/// (`ORDER BY alias`) resolve.
#[derive(Default)]
struct Names {
    aliases: HashSet<String>,
    alias_tables: HashMap<String, String>,
}

impl Visitor for Names {
    type Break = ();

    fn pre_visit_query(&mut self, query: &Query) -> ControlFlow<()> {
        if let Some(with) = &query.with {
            for cte in &with.cte_tables {
                self.aliases.insert(cte.alias.name.value.to_lowercase());
                self.aliases
                    .extend(cte.alias.columns.iter().map(|c| c.name.value.to_lowercase()));
            }
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_select(&mut self, select: &Select) -> ControlFlow<()> {
        for item in &select.projection {
            match item {
                SelectItem::ExprWithAlias { alias, .. } => {
                    self.aliases.insert(alias.value.to_lowercase());
                }
                SelectItem::ExprWithAliases { aliases, .. } => {
                    self.aliases
                        .extend(aliases.iter().map(|a| a.value.to_lowercase()));
                }
                _ => {}
            }
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, factor: &TableFactor) -> ControlFlow<()> {
        let alias = match factor {
            TableFactor::Table { alias, name, .. } => {
                if let (Some(a), Some(table)) = (alias, single_name(name)) {
                    self.alias_tables.insert(a.name.value.to_lowercase(), table);
                }
                alias
            }
            TableFactor::Derived { alias, .. } => alias,
            _ => &None,
        };
        if let Some(a) = alias {
            self.aliases.insert(a.name.value.to_lowercase());
            self.aliases
                .extend(a.columns.iter().map(|c| c.name.value.to_lowercase()));
        }
        ControlFlow::Continue(())
    }
}

/// The lowercase name of a one-part object name.
fn single_name(name: &ObjectName) -> Option<String> {
    match name.0.as_slice() {
        [part] => part.as_ident().map(|i| i.value.to_lowercase()),
        _ => None,
    }
}

/// One query level's CTEs: visible names, and the CTE bodies still to come.
struct Frame {
    visible: Vec<String>,
    pending: Vec<(*const Query, String)>,
    /// The CTE this query is the body of, in the enclosing frame.
    defines: Option<String>,
}

struct Checker<'a> {
    phase: Phase,
    model: &'a ModelNames,
    names: &'a Names,
    frames: Vec<Frame>,
}

impl Checker<'_> {
    fn cte_visible(&self, name: &str) -> bool {
        self.frames.iter().any(|f| f.visible.iter().any(|v| v == name))
    }

    fn check_body(body: &SetExpr) -> Result<(), GuardError> {
        match body {
            SetExpr::Select(_) | SetExpr::Query(_) | SetExpr::Values(_) => Ok(()),
            SetExpr::SetOperation { left, right, .. } => {
                Self::check_body(left)?;
                Self::check_body(right)
            }
            SetExpr::Insert(s) | SetExpr::Update(s) | SetExpr::Delete(s) | SetExpr::Merge(s) => {
                Err(GuardError::NotASelect {
                    kind: statement_kind(s),
                })
            }
            SetExpr::Table(_) => Err(GuardError::NotASelect { kind: "TABLE".into() }),
        }
    }

    fn check_function(name: &ObjectName) -> Result<(), GuardError> {
        let parts: Vec<String> = name
            .0
            .iter()
            .map(|p| {
                p.as_ident()
                    .map_or_else(|| p.to_string(), |i| i.value.to_lowercase())
            })
            .collect();
        let last = parts.last().cloned().unwrap_or_default();
        let forbidden = FORBIDDEN_FUNCTIONS.contains(&last.as_str())
            || FORBIDDEN_PREFIXES.iter().any(|p| last.starts_with(p));
        if forbidden {
            return Err(GuardError::ForbiddenFunction {
                name: parts.join("."),
            });
        }
        if parts.len() != 1 || !ALLOWED_FUNCTIONS.contains(&last.as_str()) {
            return Err(GuardError::FunctionNotAllowed {
                name: parts.join("."),
            });
        }
        Ok(())
    }

    fn check_column(&self, parts: &[sqlparser::ast::Ident]) -> Result<(), GuardError> {
        let lower: Vec<String> = parts.iter().map(|p| p.value.to_lowercase()).collect();
        let known_name = |n: &str| {
            self.model.columns.contains(n)
                || self.names.aliases.contains(n)
                || self.model.tables.contains_key(n)
        };
        match lower.as_slice() {
            [single] if known_name(single) => Ok(()),
            [single] => Err(GuardError::UnknownColumn { name: single.clone() }),
            [qualifier, column] => {
                let table = self.names.alias_tables.get(qualifier).or_else(|| {
                    self.model
                        .tables
                        .contains_key(qualifier.as_str())
                        .then_some(qualifier)
                });
                match table.and_then(|t| self.model.tables.get(t)) {
                    Some(cols) if cols.contains(column) => Ok(()),
                    Some(_) => Err(GuardError::UnknownColumn {
                        name: format!("{qualifier}.{column}"),
                    }),
                    // A CTE or derived table: its columns are aliases or model columns.
                    None if self.names.aliases.contains(qualifier) => {
                        if known_name(column) {
                            Ok(())
                        } else {
                            Err(GuardError::UnknownColumn {
                                name: format!("{qualifier}.{column}"),
                            })
                        }
                    }
                    None => Err(GuardError::UnknownTable {
                        name: qualifier.clone(),
                    }),
                }
            }
            _ => Err(GuardError::UnknownColumn {
                name: lower.join("."),
            }),
        }
    }
}

impl Visitor for Checker<'_> {
    type Break = GuardError;

    fn pre_visit_query(&mut self, query: &Query) -> ControlFlow<GuardError> {
        if self.phase != Phase::Structure {
            return ControlFlow::Continue(());
        }
        if !query.locks.is_empty() {
            return ControlFlow::Break(GuardError::LockingClause);
        }
        if let Err(e) = Self::check_body(&query.body) {
            return ControlFlow::Break(e);
        }
        let defines = self.frames.last().and_then(|f| {
            f.pending
                .iter()
                .find(|(ptr, _)| std::ptr::eq(*ptr, query))
                .map(|(_, name)| name.clone())
        });
        let mut frame = Frame {
            visible: Vec::new(),
            pending: Vec::new(),
            defines,
        };
        if let Some(with) = &query.with {
            for cte in &with.cte_tables {
                let name = cte.alias.name.value.to_lowercase();
                frame
                    .pending
                    .push((cte.query.as_ref() as *const Query, name.clone()));
                if with.recursive {
                    frame.visible.push(name);
                }
            }
        }
        self.frames.push(frame);
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _query: &Query) -> ControlFlow<GuardError> {
        if self.phase != Phase::Structure {
            return ControlFlow::Continue(());
        }
        if let Some(frame) = self.frames.pop()
            && let (Some(name), Some(parent)) = (frame.defines, self.frames.last_mut())
        {
            // A non-recursive CTE is visible only after its own body.
            parent.visible.push(name);
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_select(&mut self, select: &Select) -> ControlFlow<GuardError> {
        if self.phase == Phase::Structure && select.into.is_some() {
            return ControlFlow::Break(GuardError::SelectInto);
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_relation(&mut self, relation: &ObjectName) -> ControlFlow<GuardError> {
        if self.phase != Phase::Structure {
            return ControlFlow::Continue(());
        }
        let Some(name) = single_name(relation) else {
            return ControlFlow::Break(GuardError::UnknownTable {
                name: relation.to_string(),
            });
        };
        if self.cte_visible(&name) || self.model.tables.contains_key(&name) {
            ControlFlow::Continue(())
        } else {
            ControlFlow::Break(GuardError::UnknownTable { name })
        }
    }

    fn pre_visit_table_factor(&mut self, factor: &TableFactor) -> ControlFlow<GuardError> {
        if self.phase != Phase::Structure {
            return ControlFlow::Continue(());
        }
        match factor {
            // The name is checked in `pre_visit_relation`.
            TableFactor::Table { args: None, .. } => ControlFlow::Continue(()),
            TableFactor::Table { name, .. } | TableFactor::Function { name, .. } => {
                ControlFlow::Break(GuardError::TableFunction {
                    name: name.to_string(),
                })
            }
            TableFactor::Derived { .. } | TableFactor::NestedJoin { .. } => ControlFlow::Continue(()),
            other => {
                let text = other.to_string();
                let name = text.split(['(', ' ']).next().unwrap_or("?").to_owned();
                ControlFlow::Break(GuardError::TableFunction { name })
            }
        }
    }

    fn pre_visit_expr(&mut self, expr: &Expr) -> ControlFlow<GuardError> {
        let result = match (self.phase, expr) {
            // The arguments are visited on their own.
            (Phase::Functions, Expr::Function(f)) => Self::check_function(&f.name),
            (Phase::Columns, Expr::Identifier(ident)) => self.check_column(std::slice::from_ref(ident)),
            (Phase::Columns, Expr::CompoundIdentifier(parts)) => self.check_column(parts),
            _ => Ok(()),
        };
        match result {
            Ok(()) => ControlFlow::Continue(()),
            Err(e) => ControlFlow::Break(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model() -> SemanticModel {
        SemanticModel::wound_care()
    }

    #[test]
    fn a_plain_select_over_model_tables_is_accepted() {
        let sql = "SELECT w.etiology, COUNT(*) AS n FROM wounds AS w GROUP BY w.etiology ORDER BY n DESC";
        for d in Dialect::ALL {
            assert_eq!(check(sql, &model(), d), Ok(()), "{d:?}");
        }
    }

    #[test]
    fn a_second_statement_is_refused_even_after_a_semicolon() {
        let sql = "SELECT 1 FROM wounds; DELETE FROM wounds";
        assert_eq!(
            check(sql, &model(), Dialect::Sqlite),
            Err(GuardError::StackedStatements)
        );
        assert_eq!(check("SELECT id FROM wounds;", &model(), Dialect::Sqlite), Ok(()));
    }

    #[test]
    fn a_cte_cannot_shadow_a_table_inside_its_own_body() {
        let sql = "WITH pg_user AS (SELECT * FROM pg_user) SELECT * FROM pg_user";
        assert_eq!(
            check(sql, &model(), Dialect::Postgres),
            Err(GuardError::UnknownTable {
                name: "pg_user".into()
            })
        );
        let ok = "WITH recent AS (SELECT * FROM wounds) SELECT * FROM recent";
        assert_eq!(check(ok, &model(), Dialect::Postgres), Ok(()));
    }
}
