fn main() {
    let line = std::env::args().nth(1).unwrap();
    let mut p = brush_parser::Parser::new(
        std::io::BufReader::new(line.as_bytes()),
        &brush_parser::ParserOptions::default(),
    );
    match p.parse_program() {
        Ok(prog) => println!("{:#?}", prog),
        Err(e) => println!("ERR {e:?} / {e}"),
    }
    for w in std::env::args().skip(2) {
        println!(
            "{:#?}",
            brush_parser::word::parse(&w, &brush_parser::ParserOptions::default())
        );
    }
}
