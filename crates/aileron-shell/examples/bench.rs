fn main() {
    let ctx = aileron_shell::Context {
        cwd: "/work/p",
        home: "/home/u",
        limits: Default::default(),
    };
    for line in [
        "git status && cargo test --all 2>&1 | tail -n 50",
        "ls",
        "echo $(rm -rf x)",
        "find . -name '*.rs' -exec grep -l foo {} \\;",
        "for f in $(ls); do if [ -f \"${f}\" ]; then echo \"$(basename \"${f}\")\"; fi; done",
    ] {
        let n = 20000;
        for _ in 0..1000 {
            std::hint::black_box(aileron_shell::analyse(std::hint::black_box(line), &ctx));
        }
        let t = std::time::Instant::now();
        for _ in 0..n {
            std::hint::black_box(aileron_shell::analyse(std::hint::black_box(line), &ctx));
        }
        println!("{:?}/iter  {line}", t.elapsed() / n);
    }
}
