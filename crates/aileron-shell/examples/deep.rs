fn parse(line: &str) -> bool {
    let mut p = brush_parser::Parser::new(
        std::io::BufReader::new(line.as_bytes()),
        &brush_parser::ParserOptions::default(),
    );
    p.parse_program().is_ok()
}
fn main() {
    let kind = std::env::args().nth(1).unwrap();
    let n: usize = std::env::args().nth(2).unwrap().parse().unwrap();
    let line = match kind.as_str() {
        "cs" => format!("{}ls{}", "echo $(".repeat(n), ")".repeat(n)),
        "sub" => format!("{}ls{}", "( ".repeat(n), " )".repeat(n)),
        "brace" => format!("{}ls{}", "{ ".repeat(n), "; }".repeat(n)),
        "if" => format!("{}ls{}", "if true; then ".repeat(n), "; fi".repeat(n)),
        "bt" => {
            let mut s = String::from("ls");
            for _ in 0..n {
                s = format!("echo `{}`", s.replace('\\', "\\\\").replace('`', "\\`"));
            }
            s
        }
        "dq" => format!("{}ls{}", "echo \"$(".repeat(n), ")\"".repeat(n)),
        "arith" => format!("echo $(( {}1{} ))", "(".repeat(n), ")".repeat(n)),
        "pipe" => format!("{}ls", "ls | ".repeat(n)),
        "and" => format!("{}ls", "ls && ".repeat(n)),
        "semi" => format!("{}ls", "ls ; ".repeat(n)),
        "open" => "$(".repeat(n),
        _ => panic!(),
    };
    let t = std::time::Instant::now();
    let ok = parse(&line);
    println!("{kind} n={n} len={} ok={ok} {:?}", line.len(), t.elapsed());
}
