//! Prints the Actions the gateway lowers each line of standard input to:
//! `VERB[tags]` per Action, for looking at what a text becomes (and for
//! comparing with what a server runs of it).
//!
//! `echo "SELECT 1; DROP TABLE x" | cargo run -p aileron-postgres --example lower`
//! (`-- --escapes`: as when `standard_conforming_strings` may be off)

use aileron_postgres::lower::{self, Context};
use std::io::BufRead;

fn main() {
    let cx = Context {
        backslash_escapes: std::env::args().any(|a| a == "--escapes"),
        ..Context::new("db", "user")
    };
    for line in std::io::stdin().lock().lines().map_while(Result::ok) {
        let text = line.replace("\\n", "\n");
        let actions: Vec<String> = lower::lower(&text, &cx)
            .actions
            .iter()
            .map(|a| format!("{}[{}]", a.verb, a.tags.join(",")))
            .collect();
        println!("{}", actions.join(" "));
    }
}
