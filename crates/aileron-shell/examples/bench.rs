fn parse(line: &str) -> bool {
    let mut p = brush_parser::Parser::new(std::io::BufReader::new(line.as_bytes()), &brush_parser::ParserOptions::default());
    p.parse_program().is_ok()
}
fn main() {
    let line = std::env::args().nth(1).unwrap();
    let n = 20000;
    let t = std::time::Instant::now();
    for _ in 0..n { assert!(parse(std::hint::black_box(&line))); }
    println!("parse: {:?}/iter", t.elapsed() / n);
    let opts = brush_parser::ParserOptions::default();
    let t = std::time::Instant::now();
    for i in 0..n { let w = format!("foo{}", i % 1000); std::hint::black_box(brush_parser::word::parse(&w, &opts).unwrap()); }
    println!("word: {:?}/iter", t.elapsed() / n);
    let t = std::time::Instant::now();
    for _ in 0..n { let t = brush_parser::tokenize_str_with_options(std::hint::black_box(&line), &opts.tokenizer_options()).unwrap(); std::hint::black_box(t); }
    println!("tok (cached): {:?}/iter", t.elapsed() / n);
}
