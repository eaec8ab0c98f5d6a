//! SQL text → `sql.query` Actions. Pure, like the engine: no I/O, no clock.
//!
//! The text is read as PostgreSQL's lexer reads it (sqlparser's tokenizer
//! with the PostgreSQL dialect: dollar quoting, nested comments, `E'...'`
//! escapes), split into statements and parsed. Each statement is one
//! Action (`sql.verb`, `sql.tables`, `sql.text`, `sql.database`,
//! `sql.user`, a sensitivity from the verb), and each statement nested in
//! another is one more (the `DELETE` in `WITH d AS (DELETE ...) SELECT`,
//! the statement of a `PREPARE` or an `EXPLAIN ANALYZE`): the request
//! takes the most restrictive verdict of them all.
//!
//! What the analysis cannot vouch for is tagged: `unparsable` (a statement
//! the parser does not read, text that is not UTF-8 or may be read in
//! another encoding, backslashes the server may read as escapes: a
//! structural ask) and `dynamic` (a `DO` block, a call of a function or
//! procedure not known to only compute a value, `EXECUTE` of a statement not
//! prepared on this connection, `COPY ... PROGRAM`, `LOAD`: an ask a
//! policy may override by id).
//!
//! Two more tags keep a rule written by verb from taking a write for a
//! read: `field-call` (a qualified column `t.name` or a field selection
//! `(t).name`, which the server reads as a call of `name(t)` when `t` has
//! no column `name`: the text alone cannot tell them apart) and
//! `write-in-read` (a statement whose form reads and which writes: a
//! sequence function, `SELECT INTO`; a statement nested in it is an Action
//! of its own, under its own verb). Each is an ask of its own built-in
//! rule, overridable by id.

use crate::functions::{self, Class};
use aileron_engine::builtin::{DYNAMIC, FIELD_CALL, UNPARSABLE, WRITE_IN_READ};
use aileron_engine::{Action, ActionType, Sensitivity};
use serde_json::{Map, Value, json};
use sqlparser::ast::{
    AccessExpr, CopySource, CopyTarget, Expr, GrantObjects, Ident, ObjectName, ObjectNamePart,
    ObjectType, OnConflictAction, OnInsert, Query, Set, SetExpr, Statement, TableFactor, Visit,
    Visitor,
};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Location, Token, TokenWithSpan, Tokenizer};
use std::borrow::Cow;
use std::fmt::Write as _;
use std::ops::ControlFlow;

/// The longest summary (the one line prompts and the audit log show).
const SUMMARY_MAX: usize = 200;

/// Tags of code the analysis does not see, which may change how the server
/// reads later text and resolves names (`set_config(...)` of
/// `standard_conforming_strings` or `search_path`). A qualified column is
/// taken for a column once allowed (the override's premise: no function
/// takes the row).
const UNSEEN_CODE: &[&str] = &[DYNAMIC, UNPARSABLE];

/// Settings that change who runs the statements: `mutate`, like `SET ROLE`.
const IDENTITY_SETTINGS: &[&str] = &["role", "session_authorization"];

/// Who runs the statements, where, and what the connection knows.
pub struct Context<'a> {
    pub database: &'a str,
    pub user: &'a str,
    /// The server may read a backslash in an ordinary string as an escape
    /// (`standard_conforming_strings` is, or may have been set, off).
    pub backslash_escapes: bool,
    /// The text of a statement prepared on this connection, by name.
    pub prepared: &'a dyn Fn(&str) -> Option<String>,
    /// `pg_catalog` is known to be searched first: nothing allowed on the
    /// connection may have changed `search_path` (code the analysis could
    /// not see, a path approved that names it later). Otherwise only a
    /// name qualified by `pg_catalog` is trusted.
    pub trusted_names: bool,
}

fn nothing_prepared(_: &str) -> Option<String> {
    None
}

impl<'a> Context<'a> {
    /// A connection of `user` to `database` that has prepared nothing.
    pub fn new(database: &'a str, user: &'a str) -> Context<'a> {
        Context {
            database,
            user,
            backslash_escapes: false,
            prepared: &nothing_prepared,
            trusted_names: true,
        }
    }
}

/// What a client sent to be run: SQL text (a `Query` or `Parse`), or a
/// fast-path call of a function by its object id.
#[derive(Clone, Copy, Debug)]
pub enum Lowering<'a> {
    Text(&'a [u8]),
    FunctionCall(u32),
}

impl Lowering<'_> {
    /// Its Actions; `utf8` as [`lower_bytes`] takes it.
    pub fn lower(self, utf8: bool, cx: &Context) -> Lowered {
        match self {
            Lowering::Text(bytes) => lower_bytes(bytes, utf8, cx),
            Lowering::FunctionCall(oid) => {
                let a = function_call(oid, cx);
                Lowered {
                    line: a.summary.clone(),
                    actions: vec![a],
                    prepares: Vec::new(),
                    changes_reading: true,
                    changes_names: true,
                }
            }
        }
    }
}

/// The Actions of one text, and what the connection learns from it.
#[derive(Debug, Default)]
pub struct Lowered {
    /// The text on one line, shortened: what a prompt shows.
    pub line: String,
    /// Empty: the text holds no statement (the server runs nothing).
    pub actions: Vec<Action>,
    /// The statements it prepares (`PREPARE name AS ...`), with their text:
    /// `EXECUTE name` is decided as them.
    pub prepares: Vec<(String, String)>,
    /// It may change how the server reads later text:
    /// `standard_conforming_strings`, the client's encoding, or code the
    /// analysis cannot see or read (which may set either).
    pub changes_reading: bool,
    /// It may change `search_path`: code the analysis cannot see or read
    /// (`set_config`, a function), or a path naming `pg_catalog` later.
    pub changes_names: bool,
}

/// Lowers the bytes of a `Query` or `Parse`. `utf8`: the client's encoding
/// is UTF-8 and nothing may have changed it; otherwise (or when the bytes
/// are not UTF-8) text that is not ASCII is read byte by byte, as far as
/// its ASCII goes, and also tagged `unparsable`: in a multi-byte encoding
/// such as SJIS a backslash or quote may be half of a character.
pub fn lower_bytes(bytes: &[u8], utf8: bool, cx: &Context) -> Lowered {
    let (text, doubt) = decode(bytes, utf8);
    let mut lowered = lower(&text, cx);
    if let Some(why) = doubt {
        let verb = first_word(&text);
        lowered.actions.push(unparsable(&verb, &text, cx, why));
    }
    lowered
}

/// The text of `bytes`, and why it may not be what the server reads.
fn decode(bytes: &[u8], utf8: bool) -> (Cow<'_, str>, Option<&'static str>) {
    if bytes.is_ascii() {
        // ASCII is ASCII in every encoding the server speaks to clients.
        return (
            Cow::Borrowed(std::str::from_utf8(bytes).unwrap_or_default()),
            None,
        );
    }
    match std::str::from_utf8(bytes) {
        Ok(t) if utf8 => (Cow::Borrowed(t), None),
        Ok(t) => (
            Cow::Borrowed(t),
            Some("the client's encoding may not be UTF-8: the server may read the text otherwise"),
        ),
        Err(_) => (
            Cow::Owned(bytes.iter().map(|&b| b as char).collect()),
            Some("the text is not UTF-8"),
        ),
    }
}

/// Lowers SQL text.
pub fn lower(text: &str, cx: &Context) -> Lowered {
    let mut out = Lowered {
        line: summary(text),
        ..Lowered::default()
    };
    lower_into(text, cx, 0, &mut out);
    if cx.backslash_escapes && text.contains('\\') {
        out.actions.push(unparsable(
            &first_word(text),
            text,
            cx,
            "the server may read a backslash in a string as an escape \
             (standard_conforming_strings is or may be off)",
        ));
    }
    out.changes_names = out
        .actions
        .iter()
        .any(|a| a.tags.iter().any(|t| UNSEEN_CODE.contains(&t.as_str())));
    out.changes_reading = out.changes_reading
        || contains_ignore_case(text, "standard_conforming_strings")
        || contains_ignore_case(text, "client_encoding")
        || contains_ignore_case(text, "u&")
        || out
            .actions
            .iter()
            .any(|a| a.tags.iter().any(|t| UNSEEN_CODE.contains(&t.as_str())));
    out
}

/// `depth` is 1 inside the statement an `EXECUTE` runs (no further `EXECUTE`
/// is looked up there).
fn lower_into(text: &str, cx: &Context, depth: usize, out: &mut Lowered) {
    let tokens = match Tokenizer::new(&PostgreSqlDialect {}, text).tokenize_with_location() {
        Ok(t) => t,
        Err(e) => {
            out.actions.push(unparsable(
                &first_word(text),
                text,
                cx,
                &format!("the SQL text cannot be read: {e}"),
            ));
            raw_pieces(text, cx, depth, out);
            return;
        }
    };
    let pieces = split(text, &tokens);
    if pieces.is_empty() {
        return;
    }
    match parse(tokens.clone()) {
        Ok(stmts) => {
            let texts: Vec<Cow<str>> = if stmts.len() == pieces.len() {
                pieces.iter().map(|p| Cow::Borrowed(p.text)).collect()
            } else {
                stmts.iter().map(|s| Cow::Owned(s.to_string())).collect()
            };
            for (stmt, t) in stmts.iter().zip(texts) {
                lower_statement(stmt, &t, cx, depth, out);
            }
        }
        // Piece by piece: what parses is decided as itself, the rest asks
        // (a DROP beside a statement the parser does not know still denies).
        Err(_) => {
            for piece in pieces {
                match parse(piece.tokens.to_vec()) {
                    Ok(stmts) if stmts.len() == 1 => {
                        lower_statement(&stmts[0], piece.text, cx, depth, out)
                    }
                    Ok(stmts) => {
                        for stmt in &stmts {
                            lower_statement(stmt, &stmt.to_string(), cx, depth, out);
                        }
                    }
                    Err(e) => {
                        out.actions.push(unreadable(&piece, cx, &e));
                        raw_pieces(piece.text, cx, depth, out);
                    }
                }
            }
        }
    }
}

/// Text the analysis could not read is asked about; beside it, what the
/// server might run of it is decided too: the text cut at every `;`
/// (quotes and comments taken for nothing, as the analysis cannot place
/// them), each piece that parses lowered as itself. More than the server
/// runs, never less: a `DROP` that a lexer the analysis disagrees with
/// would run still meets the rules about `DROP`.
fn raw_pieces(text: &str, cx: &Context, depth: usize, out: &mut Lowered) {
    let cut: Vec<&str> = text.split(';').collect();
    if cut.len() < 2 {
        return;
    }
    for piece in cut {
        let Ok(tokens) = Tokenizer::new(&PostgreSqlDialect {}, piece).tokenize_with_location()
        else {
            continue;
        };
        if let Ok(stmts) = parse(tokens) {
            for stmt in &stmts {
                lower_statement(stmt, piece.trim(), cx, depth, out);
            }
        }
    }
}

/// Parses every token, or fails: a parser that stops early (sqlparser ends
/// at an `END` after a statement) must not leave text undecided.
fn parse(tokens: Vec<TokenWithSpan>) -> Result<Vec<Statement>, String> {
    let dialect = PostgreSqlDialect {};
    let mut parser = Parser::new(&dialect).with_tokens_with_locations(tokens);
    let stmts = parser.parse_statements().map_err(|e| e.to_string())?;
    let next = parser.peek_token();
    if next.token != Token::EOF {
        return Err(format!("unexpected {} at {}", next.token, next.span.start));
    }
    Ok(stmts)
}

/// One statement's text as written, and its tokens.
struct Piece<'t> {
    text: &'t str,
    tokens: &'t [TokenWithSpan],
}

/// The statements of `tokens`: split at each `;` outside parentheses,
/// those holding only blanks and comments left out.
fn split<'t>(text: &'t str, tokens: &'t [TokenWithSpan]) -> Vec<Piece<'t>> {
    let mut offsets = Offsets::new(text);
    let mut pieces = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    let mut push = |from: usize, to: usize, offsets: &mut Offsets| {
        let toks = &tokens[from..to];
        let mut words = toks
            .iter()
            .filter(|t| !matches!(t.token, Token::Whitespace(_) | Token::EOF));
        let (Some(first), last) = (words.next(), words.next_back()) else {
            return;
        };
        let last = last.unwrap_or(first);
        let a = offsets.at(first.span.start);
        let b = offsets.at(last.span.end).max(a);
        pieces.push(Piece {
            text: &text[a..b],
            tokens: toks,
        });
    };
    for (i, t) in tokens.iter().enumerate() {
        match t.token {
            Token::LParen => depth += 1,
            Token::RParen => depth = depth.saturating_sub(1),
            Token::SemiColon if depth == 0 => {
                push(start, i, &mut offsets);
                start = i + 1;
            }
            _ => {}
        }
    }
    push(start, tokens.len(), &mut offsets);
    pieces
}

/// Byte offsets of the tokenizer's (line, column) places, columns counted
/// in characters; read forwards, as the pieces are.
struct Offsets<'t> {
    text: &'t str,
    line: u64,
    line_start: usize,
}

impl<'t> Offsets<'t> {
    fn new(text: &'t str) -> Offsets<'t> {
        Offsets {
            text,
            line: 1,
            line_start: 0,
        }
    }

    fn at(&mut self, loc: Location) -> usize {
        if loc.line < self.line {
            self.line = 1;
            self.line_start = 0;
        }
        while self.line < loc.line {
            match self.text[self.line_start..].find('\n') {
                Some(n) => {
                    self.line_start += n + 1;
                    self.line += 1;
                }
                None => return self.text.len(),
            }
        }
        let rest = &self.text[self.line_start..];
        let col = loc.column.saturating_sub(1) as usize;
        self.line_start + rest.char_indices().nth(col).map_or(rest.len(), |(i, _)| i)
    }
}

/// A piece the parser does not read: a `DO` block (dynamic: its text is
/// code), anything else unparsable.
fn unreadable(piece: &Piece, cx: &Context, error: &str) -> Action {
    let words: Vec<&Token> = piece
        .tokens
        .iter()
        .map(|t| &t.token)
        .filter(|t| !matches!(t, Token::Whitespace(_) | Token::EOF))
        .collect();
    if is_do_block(&words) {
        let mut a = action(
            "DO",
            Sensitivity::Mutate,
            Vec::new(),
            piece.text,
            cx,
            vec![DYNAMIC.to_owned()],
        );
        a.description = Some("a DO block runs its text as code".into());
        return a;
    }
    let verb = match words.first() {
        Some(Token::Word(w)) => w.value.to_ascii_uppercase(),
        _ => first_word(piece.text),
    };
    unparsable(
        &verb,
        piece.text,
        cx,
        &format!("the parser cannot read the statement: {error}"),
    )
}

/// `DO [LANGUAGE name] 'code' [LANGUAGE name]`, the code one string.
fn is_do_block(words: &[&Token]) -> bool {
    let keyword = |t: &Token, k: &str| matches!(t, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(k));
    let name = |t: &Token| matches!(t, Token::Word(_));
    let string = |t: &Token| {
        matches!(
            t,
            Token::SingleQuotedString(_)
                | Token::EscapedStringLiteral(_)
                | Token::DollarQuotedString(_)
                | Token::UnicodeStringLiteral(_)
        )
    };
    match words {
        [d, code] => keyword(d, "do") && string(code),
        [d, a, b, c] => {
            keyword(d, "do")
                && ((keyword(a, "language") && name(b) && string(c))
                    || (string(a) && keyword(b, "language") && name(c)))
        }
        _ => false,
    }
}

/// One Action for text the analysis cannot vouch for: its first word as
/// the verb (so that a rule about DROP still sees a DROP), at least
/// `mutate`.
fn unparsable(verb: &str, text: &str, cx: &Context, why: &str) -> Action {
    let mut a = action(
        verb,
        verb_sensitivity(verb).max(Sensitivity::Mutate),
        Vec::new(),
        text,
        cx,
        vec![UNPARSABLE.to_owned()],
    );
    a.description = Some(why.to_owned());
    a
}

/// The Action of a statement (and of each statement nested in it).
fn lower_statement(stmt: &Statement, text: &str, cx: &Context, depth: usize, out: &mut Lowered) {
    let mut walk = Walk {
        untrusted_names: !cx.trusted_names,
        ..Walk::default()
    };
    let _ = stmt.visit(&mut walk);
    let facts = facts_of(stmt, &walk, cx, depth);
    let mut nested = Vec::new();
    for inner in &walk.nested {
        let mut w = Walk {
            nested_done: true,
            untrusted_names: !cx.trusted_names,
            ..Walk::default()
        };
        let _ = inner.visit(&mut w);
        let f = facts_of(inner, &w, cx, depth);
        nested.push(action(
            &f.verb,
            f.sensitivity,
            f.tables,
            &inner.to_string(),
            cx,
            f.tags,
        ));
        if let Some(d) = f.description {
            nested.last_mut().expect("pushed").description = Some(d);
        }
    }
    let mut sensitivity = facts.sensitivity;
    let mut tables = facts.tables;
    let mut tags = facts.tags;
    // The statement an EXECUTE runs.
    if let Some(inner) = facts.executes {
        for a in &inner {
            let tables_of = a.facets.get("sql").and_then(|s| s.get("tables"));
            for t in tables_of.and_then(Value::as_array).into_iter().flatten() {
                if let Some(t) = t.as_str() {
                    push_unique(&mut tables, t.to_owned());
                }
            }
        }
        nested.extend(inner);
    }
    for a in &nested {
        sensitivity = sensitivity.max(a.sensitivity.unwrap_or_default());
        if a.tags.iter().any(|t| t == DYNAMIC) && !tags.iter().any(|t| t == DYNAMIC) {
            tags.push(DYNAMIC.to_owned());
        }
    }
    // A rule written by verb would take it for a read. (A statement nested
    // in it is an Action of its own, under its own verb.)
    if facts.writes && facts.reads {
        sensitivity = sensitivity.max(Sensitivity::Write);
        if !tags.iter().any(|t| t == WRITE_IN_READ) {
            tags.push(WRITE_IN_READ.to_owned());
        }
    }
    let mut top = action(
        &facts.verb,
        sensitivity,
        tables,
        &mask_passwords(text),
        cx,
        tags,
    );
    top.description = facts.description;
    out.actions.push(top);
    out.actions.extend(nested);
    if let Some(p) = facts.prepares {
        out.prepares.push(p);
    }
    // `SET NAMES` sets the client's encoding without naming it.
    if matches!(stmt, Statement::Set(Set::SetNames { .. })) {
        out.changes_reading = true;
    }
}

/// What a statement does, as far as the analysis sees.
#[derive(Default)]
struct Facts {
    verb: String,
    sensitivity: Sensitivity,
    tables: Vec<String>,
    tags: Vec<String>,
    description: Option<String>,
    prepares: Option<(String, String)>,
    /// The Actions of the statement an `EXECUTE` runs.
    executes: Option<Vec<Action>>,
    /// It writes, as far as the analysis knows (not merely a call it
    /// cannot see through): a sequence function, `SELECT INTO`.
    writes: bool,
    /// Its form reads: its verb (`SELECT`, `SET`, ...), `COPY ... TO STDOUT`.
    reads: bool,
}

fn facts_of(stmt: &Statement, walk: &Walk, cx: &Context, depth: usize) -> Facts {
    use Sensitivity::*;
    let words = leading_words(stmt, 3);
    let verb = match stmt {
        Statement::Query(_) => "SELECT".to_owned(),
        Statement::StartTransaction { .. } => "BEGIN".to_owned(),
        _ => words.first().cloned().unwrap_or_default(),
    };
    let mut f = Facts {
        sensitivity: verb_sensitivity(&verb),
        reads: verb_sensitivity(&verb) == Read,
        tables: walk.tables.clone(),
        verb,
        ..Facts::default()
    };
    let dynamic = |f: &mut Facts, why: String| {
        f.sensitivity = f.sensitivity.max(Mutate);
        if !f.tags.iter().any(|t| t == DYNAMIC) {
            f.tags.push(DYNAMIC.to_owned());
        }
        f.description.get_or_insert(why);
    };
    match stmt {
        Statement::Query(q) => {
            let into = select_into(q);
            if !into.is_empty() {
                f.sensitivity = Write;
                f.writes = true;
                for t in into {
                    push_unique(&mut f.tables, t);
                }
            }
        }
        Statement::Insert(i)
            if matches!(&i.on, Some(OnInsert::OnConflict(c)) if matches!(c.action, OnConflictAction::DoUpdate(_)))
                || matches!(i.on, Some(OnInsert::DuplicateKeyUpdate(_))) =>
        {
            f.sensitivity = Mutate;
        }
        // Every row: as lost as by a DELETE without WHERE.
        Statement::Update(u) => {
            f.sensitivity = if u.selection.is_none() {
                Destructive
            } else {
                Mutate
            }
        }
        Statement::Delete(d) => {
            f.sensitivity = if d.selection.is_none() {
                Destructive
            } else {
                Mutate
            }
        }
        Statement::Drop {
            object_type, names, ..
        } => {
            if matches!(
                object_type,
                ObjectType::Table
                    | ObjectType::ForeignTable
                    | ObjectType::View
                    | ObjectType::MaterializedView
            ) {
                for n in names {
                    push_unique(&mut f.tables, object_name(n));
                }
            }
        }
        Statement::AlterTable(t) => {
            push_unique(&mut f.tables, object_name(&t.name));
            if t.operations
                .iter()
                .any(|op| matches!(op, sqlparser::ast::AlterTableOperation::DropColumn { .. }))
            {
                f.sensitivity = Destructive;
            }
        }
        Statement::CreateTable(t) => push_unique(&mut f.tables, object_name(&t.name)),
        Statement::CreateView(v) => push_unique(&mut f.tables, object_name(&v.name)),
        Statement::CreateIndex(i) => push_unique(&mut f.tables, object_name(&i.table_name)),
        Statement::Grant(g) => grant_tables(g.objects.as_ref(), &mut f.tables),
        Statement::Revoke(r) => grant_tables(r.objects.as_ref(), &mut f.tables),
        Statement::Copy {
            source, to, target, ..
        } => {
            if let CopySource::Table { table_name, .. } = source {
                push_unique(&mut f.tables, object_name(table_name));
            }
            f.sensitivity = match (target, to) {
                (CopyTarget::Program { .. }, _) => Mutate,
                (CopyTarget::File { .. }, _) | (_, false) => Write,
                (_, true) => Read,
            };
            f.reads = f.sensitivity == Read;
            if let CopyTarget::Program { command } = target {
                dynamic(
                    &mut f,
                    format!("COPY runs the program {command:?} on the server"),
                );
            }
        }
        Statement::Set(Set::SetRole { .. } | Set::SetSessionAuthorization(_)) => {
            f.sensitivity = Mutate;
        }
        Statement::Set(Set::SingleAssignment { variable, .. })
            if IDENTITY_SETTINGS.contains(&object_name(variable).as_str()) =>
        {
            f.sensitivity = Mutate;
        }
        Statement::Set(Set::SingleAssignment {
            variable, values, ..
        }) if object_name(variable) == "search_path" => {
            let schemas = values.iter().map(|v| match v {
                Expr::Identifier(i) => Some(ident(i)),
                // A string is one schema's name (the server quotes it).
                Expr::Value(v) => match &v.value {
                    sqlparser::ast::Value::SingleQuotedString(s) => Some(s.clone()),
                    _ => None,
                },
                // Anything else the analysis does not read: not trusted.
                _ => None,
            });
            if !functions::search_path_trusted(schemas) {
                dynamic(&mut f, functions::UNTRUSTED_PATH.into());
            }
        }
        Statement::Explain {
            analyze, options, ..
        } if explain_runs(*analyze, options.as_deref()) => {
            // The statement itself is a nested Action.
        }
        Statement::Prepare {
            name, statement, ..
        } => {
            f.prepares = Some((ident(name), statement.to_string()));
        }
        Statement::Execute { name, .. } => {
            let found = name
                .as_ref()
                .filter(|_| depth == 0)
                .and_then(|n| (cx.prepared)(&object_name(n)));
            match found {
                Some(text) => {
                    let mut inner = Lowered::default();
                    lower_into(&text, cx, depth + 1, &mut inner);
                    f.executes = Some(inner.actions);
                }
                None => dynamic(
                    &mut f,
                    "EXECUTE of a statement not prepared on this connection".into(),
                ),
            }
        }
        Statement::Call(func) => dynamic(&mut f, format!("CALL {} runs a procedure", func.name)),
        Statement::CreateFunction(sqlparser::ast::CreateFunction { name, .. })
        | Statement::CreateAggregate(sqlparser::ast::CreateAggregate { name, .. })
            if shadows_a_trusted_function(name) =>
        {
            dynamic(
                &mut f,
                format!(
                    "defines {name} under the name of one of PostgreSQL's own functions, \
                     which the server may call in its place by its argument types"
                ),
            )
        }
        Statement::CreateOperator(op) => dynamic(
            &mut f,
            format!(
                "defines the operator {}, which later statements call without naming its function",
                op.name
            ),
        ),
        _ => {}
    }
    match f.verb.as_str() {
        "CREATE" if words.get(1).is_some_and(|w| w == "OR") => {
            f.sensitivity = f.sensitivity.max(Mutate)
        }
        "LOAD" => dynamic(&mut f, "LOAD loads a shared library into the server".into()),
        _ => {}
    }
    if walk.writing_functions {
        f.sensitivity = f.sensitivity.max(Write);
        f.writes = true;
    }
    if let Some(func) = walk.unknown_functions.first() {
        f.sensitivity = f.sensitivity.max(Mutate);
        dynamic(
            &mut f,
            format!("calls {func}(), which the analysis cannot see through"),
        );
    }
    if let Some(first) = walk.field_calls.first() {
        f.tags.push(FIELD_CALL.to_owned());
        f.description.get_or_insert_with(|| {
            format!(
                "{first} may be a call of a function on a row (attribute notation), \
                 which the analysis cannot see"
            )
        });
    }
    f
}

/// Whether a function defined as `name` would share its name with one the
/// analysis trusts (`lower`, `nextval`): the server picks among functions
/// of one name by their argument types, `pg_catalog`'s first only on a tie.
fn shadows_a_trusted_function(name: &ObjectName) -> bool {
    let last = match name.0.last() {
        Some(ObjectNamePart::Identifier(i)) => ident(i),
        Some(other) => other.to_string(),
        None => return false,
    };
    functions::class(None, &last) != Class::Unknown
}

/// Whether an EXPLAIN runs its statement (`ANALYZE`, or the option
/// `analyze` not set false).
fn explain_runs(analyze: bool, options: Option<&[sqlparser::ast::UtilityOption]>) -> bool {
    analyze
        || options.into_iter().flatten().any(|o| {
            o.name.value.eq_ignore_ascii_case("analyze")
                && o.arg.as_ref().is_none_or(|a| {
                    let v = a.to_string().trim_matches(['\'', '"']).to_ascii_lowercase();
                    !matches!(v.as_str(), "false" | "off" | "0" | "no")
                })
        })
}

fn grant_tables(objects: Option<&GrantObjects>, tables: &mut Vec<String>) {
    if let Some(GrantObjects::Tables(names) | GrantObjects::Views(names)) = objects {
        for n in names {
            push_unique(tables, object_name(n));
        }
    }
}

/// The tables a `SELECT ... INTO` creates.
fn select_into(q: &Query) -> Vec<String> {
    fn of(body: &SetExpr, out: &mut Vec<String>) {
        match body {
            SetExpr::Select(s) => {
                for t in s.into.iter().flat_map(|i| &i.targets) {
                    match t {
                        Expr::Identifier(i) => out.push(ident(i)),
                        Expr::CompoundIdentifier(parts) => {
                            out.push(parts.iter().map(ident).collect::<Vec<_>>().join("."))
                        }
                        other => out.push(other.to_string()),
                    }
                }
            }
            SetExpr::Query(q) => of(&q.body, out),
            SetExpr::SetOperation { left, right, .. } => {
                of(left, out);
                of(right, out);
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    of(&q.body, &mut out);
    out
}

/// The sensitivity a verb has by itself.
fn verb_sensitivity(verb: &str) -> Sensitivity {
    use Sensitivity::*;
    match verb {
        "SELECT" | "VALUES" | "TABLE" | "SHOW" | "EXPLAIN" | "DESCRIBE" | "BEGIN" | "START"
        | "COMMIT" | "END" | "ROLLBACK" | "ABORT" | "SAVEPOINT" | "RELEASE" | "PREPARE"
        | "EXECUTE" | "DEALLOCATE" | "DECLARE" | "FETCH" | "MOVE" | "CLOSE" | "DISCARD"
        | "RESET" | "SET" | "LISTEN" | "UNLISTEN" => Read,
        "INSERT" | "CREATE" | "COMMENT" | "NOTIFY" | "VACUUM" | "ANALYZE" | "ANALYSE" | "LOCK"
        | "REFRESH" | "CLUSTER" | "REINDEX" | "CHECKPOINT" => Write,
        "DROP" | "TRUNCATE" => Destructive,
        _ => Mutate,
    }
}

/// What the walk over a statement finds: the tables it names, the
/// functions it calls, the statements nested in it.
#[derive(Default)]
struct Walk {
    tables: Vec<String>,
    unknown_functions: Vec<String>,
    writing_functions: bool,
    /// Qualified columns and field selections, as written: each may be a
    /// call (attribute notation).
    field_calls: Vec<String>,
    /// `search_path` may not search `pg_catalog` first: only names
    /// qualified by it are trusted.
    untrusted_names: bool,
    nested: Vec<Statement>,
    /// Nested statements are not collected (this walk is over one already).
    nested_done: bool,
    depth: usize,
    /// The statement of an EXPLAIN that does not run it, and how deep the
    /// walk is inside it.
    not_run: Option<*const Statement>,
    skipping: usize,
    /// A table factor that is a function call: its name is no table.
    table_function: Option<ObjectName>,
}

impl Visitor for Walk {
    type Break = ();

    fn pre_visit_statement(&mut self, s: &Statement) -> ControlFlow<()> {
        if self.skipping > 0 || self.not_run == Some(s as *const Statement) {
            self.skipping += 1;
        } else if self.depth > 0 && !self.nested_done {
            self.nested.push(s.clone());
        }
        if let Statement::Explain {
            analyze,
            options,
            statement,
            ..
        } = s
            && !explain_runs(*analyze, options.as_deref())
        {
            self.not_run = Some(&**statement as *const Statement);
        }
        self.depth += 1;
        ControlFlow::Continue(())
    }

    fn post_visit_statement(&mut self, _: &Statement) -> ControlFlow<()> {
        self.depth -= 1;
        self.skipping = self.skipping.saturating_sub(1);
        ControlFlow::Continue(())
    }

    fn pre_visit_relation(&mut self, name: &ObjectName) -> ControlFlow<()> {
        if self.table_function.as_ref() == Some(name) {
            self.table_function = None;
        } else {
            push_unique(&mut self.tables, object_name(name));
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, t: &TableFactor) -> ControlFlow<()> {
        match t {
            TableFactor::Table {
                name,
                args: Some(_),
                ..
            } => {
                self.function(name);
                self.table_function = Some(name.clone());
            }
            TableFactor::Function { name, .. } => self.function(name),
            _ => {}
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
        match e {
            Expr::Function(f) => self.function(&f.name),
            // `t.name`, `s.t.name`: the column `name` of `t`, or `name(t)`.
            Expr::CompoundIdentifier(parts) if parts.len() > 1 => {
                push_unique(&mut self.field_calls, e.to_string())
            }
            // `(t).name`, `(f(x)).name`: a field, or `name(...)`.
            Expr::CompoundFieldAccess { access_chain, .. }
                if access_chain.iter().any(|a| matches!(a, AccessExpr::Dot(_))) =>
            {
                push_unique(&mut self.field_calls, e.to_string())
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }
}

impl Walk {
    fn function(&mut self, name: &ObjectName) {
        let parts: Vec<String> = name
            .0
            .iter()
            .map(|p| match p {
                ObjectNamePart::Identifier(i) => ident(i),
                other => other.to_string(),
            })
            .collect();
        let (schema, func) = match parts.as_slice() {
            [f] => (None, f.as_str()),
            [.., s, f] => (Some(s.as_str()), f.as_str()),
            [] => return,
        };
        if self.untrusted_names && schema.is_none() {
            push_unique(&mut self.unknown_functions, parts.join("."));
            return;
        }
        match functions::class(schema, func) {
            Class::Harmless => {}
            Class::Writes => self.writing_functions = true,
            Class::Unknown => push_unique(&mut self.unknown_functions, parts.join(".")),
        }
    }
}

/// A name as the server folds it: unquoted parts in lower case.
fn object_name(name: &ObjectName) -> String {
    let mut s = String::new();
    for (i, p) in name.0.iter().enumerate() {
        if i > 0 {
            s.push('.');
        }
        match p {
            ObjectNamePart::Identifier(id) => s.push_str(&ident(id)),
            other => {
                let _ = write!(s, "{other}");
            }
        }
    }
    s
}

fn ident(i: &Ident) -> String {
    if i.quote_style.is_some() {
        i.value.clone()
    } else {
        i.value.to_ascii_lowercase()
    }
}

fn push_unique(v: &mut Vec<String>, s: String) {
    if !v.contains(&s) {
        v.push(s);
    }
}

/// The first `n` keywords of a statement as sqlparser writes it (upper
/// case), written no further than needed.
fn leading_words(stmt: &Statement, n: usize) -> Vec<String> {
    struct Words {
        words: Vec<String>,
        cur: String,
        n: usize,
    }
    impl std::fmt::Write for Words {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            for c in s.chars() {
                if c.is_ascii_alphabetic() || c == '_' {
                    self.cur.push(c.to_ascii_uppercase());
                    continue;
                }
                if !self.cur.is_empty() {
                    self.words.push(std::mem::take(&mut self.cur));
                    if self.words.len() >= self.n {
                        return Err(std::fmt::Error);
                    }
                }
                if !c.is_whitespace() {
                    return Err(std::fmt::Error);
                }
            }
            Ok(())
        }
    }
    let mut w = Words {
        words: Vec::new(),
        cur: String::new(),
        n,
    };
    let _ = write!(w, "{stmt}");
    if !w.cur.is_empty() && w.words.len() < n {
        w.words.push(w.cur);
    }
    w.words
}

/// The first word of a text (blanks and comments skipped), upper case.
fn first_word(text: &str) -> String {
    let mut rest = text;
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == ';' || c == '(');
        if let Some(r) = rest.strip_prefix("--") {
            rest = r.split_once('\n').map_or("", |(_, r)| r);
        } else if let Some(r) = rest.strip_prefix("/*") {
            rest = r.split_once("*/").map_or("", |(_, r)| r);
        } else {
            break;
        }
    }
    rest.chars()
        .take_while(|c| c.is_ascii_alphabetic() || *c == '_')
        .collect::<String>()
        .to_ascii_uppercase()
}

fn contains_ignore_case(hay: &str, needle: &str) -> bool {
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    h.len() >= n.len() && h.windows(n.len()).any(|w| w.eq_ignore_ascii_case(n))
}

/// A password given in the text (`CREATE ROLE r PASSWORD 'x'`) as `'***'`:
/// it never reaches a prompt or the audit log.
fn mask_passwords(text: &str) -> Cow<'_, str> {
    use std::sync::OnceLock;
    static RE: OnceLock<regex::Regex> = OnceLock::new();
    if !contains_ignore_case(text, "password") {
        return Cow::Borrowed(text);
    }
    let re = RE.get_or_init(|| {
        regex::Regex::new(r"(?i)\b(password\s+)(?:[eE]?'(?:[^'\\]|''|\\.)*'|\$([A-Za-z_]*)\$)")
            .expect("valid regex")
    });
    re.replace_all(text, "${1}'***'")
}

/// An `sql.query` Action.
pub(crate) fn action(
    verb: &str,
    sensitivity: Sensitivity,
    tables: Vec<String>,
    text: &str,
    cx: &Context,
    tags: Vec<String>,
) -> Action {
    let mut facets = Map::new();
    facets.insert(
        "sql".into(),
        json!({
            "verb": verb,
            "tables": tables,
            "text": text,
            "database": cx.database,
            "user": cx.user,
        }),
    );
    Action {
        kind: ActionType::SqlQuery,
        summary: summary(text),
        verb: verb.to_owned(),
        sensitivity: Some(sensitivity),
        primary: "sql".into(),
        tags,
        facets,
        ..Action::default()
    }
}

/// One line, at most [`SUMMARY_MAX`] characters.
pub fn summary(text: &str) -> String {
    let mut s = String::with_capacity(text.len().min(SUMMARY_MAX + 3));
    let mut blank = false;
    for c in text.trim().chars() {
        if s.len() >= SUMMARY_MAX {
            s.push('…');
            break;
        }
        if c.is_whitespace() {
            blank = true;
            continue;
        }
        if blank && !s.is_empty() {
            s.push(' ');
        }
        blank = false;
        s.push(c);
    }
    s
}

/// The Action of a fast-path `FunctionCall` (a function called by its
/// object id, outside SQL): dynamic, like any call the analysis cannot
/// see through.
pub fn function_call(oid: u32, cx: &Context) -> Action {
    let text = format!("function call by object id {oid} (fast path)");
    let mut a = action(
        "CALL",
        Sensitivity::Mutate,
        Vec::new(),
        &text,
        cx,
        vec![DYNAMIC.to_owned()],
    );
    a.description = Some("a function called by its object id: the analysis cannot see it".into());
    a
}
