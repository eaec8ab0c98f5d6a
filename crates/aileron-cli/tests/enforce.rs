//! `aileron launch --enforce`, attacked: programs the agent's tree runs
//! try every way there is to start a denied program (`touch`) or to change
//! Aileron's own files, and the test checks what a user would: the
//! forbidden file does not exist, `aileron.yaml` has the same bytes, the
//! audit log has the supervisor's deny line, and what is allowed still
//! ran (so that no test passes because everything failed). Where it is
//! cheap, the same attack runs with `--enforce none` to show it works there.

#![cfg(target_os = "linux")]

mod support;

use serde_json::Value;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use support::{Project, no_tty, text};

const POLICY: &str = "version: 1\ndefault: allow\ndeny: [\"touch *\"]\n";
const PERMISSIVE: &str = "version: 1\ndefault: allow\n";

/// The longest one launch may take here; an attack that hangs the tree fails.
const LIMIT: Duration = Duration::from_secs(15);
/// The longest a race may take (it normally takes a second or two).
const RACE_LIMIT: Duration = Duration::from_secs(10);

// ---------------------------------------------------------------------------
// Running

/// What a launch left behind.
struct Run {
    status: Option<ExitStatus>,
    stdout: String,
    stderr: String,
    timed_out: bool,
}

impl Run {
    fn code(&self) -> Option<i32> {
        self.status.and_then(|s| s.code())
    }

    /// Everything, for assertion messages.
    fn show(&self) -> String {
        format!(
            "status: {:?}{}\n--- stdout\n{}--- stderr\n{}",
            self.status,
            if self.timed_out { " (timed out)" } else { "" },
            self.stdout,
            self.stderr
        )
    }

    /// The result line `MODE: ...` that the attack program printed.
    fn result(&self, mode: &str) -> &str {
        let prefix = format!("{mode}: ");
        self.stdout
            .lines()
            .find_map(|l| l.strip_prefix(&prefix))
            .unwrap_or_else(|| panic!("no result for {mode}:\n{}", self.show()))
    }
}

/// Runs `cmd` without a terminal and with empty stdin; kills it after `limit`.
fn run_limited(cmd: &mut Command, limit: Duration) -> Run {
    no_tty(cmd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap_or_else(|e| panic!("spawn {cmd:?}: {e}"));
    let reader = |mut pipe: Box<dyn Read + Send>| {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = pipe.read_to_end(&mut v);
            let _ = tx.send(v);
        });
        rx
    };
    let out = reader(Box::new(child.stdout.take().expect("stdout")));
    let err = reader(Box::new(child.stderr.take().expect("stderr")));
    let deadline = Instant::now() + limit;
    let mut timed_out = false;
    let status = loop {
        if let Some(s) = child.try_wait().expect("try_wait") {
            break Some(s);
        }
        if Instant::now() > deadline {
            timed_out = true;
            let _ = child.kill();
            break child.wait().ok();
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    // A process of the tree that outlives the launch may hold the pipes.
    let collect = |rx: mpsc::Receiver<Vec<u8>>| {
        rx.recv_timeout(Duration::from_secs(5))
            .map(|v| text(&v))
            .unwrap_or_else(|_| "<still held open by a process of the tree>\n".into())
    };
    Run {
        status,
        stdout: collect(out),
        stderr: collect(err),
        timed_out,
    }
}

/// `aileron launch --enforce ENFORCE -- ARGV...` in the project.
fn launch(p: &Project, enforce: &str, argv: &[&str]) -> Run {
    launch_for(p, enforce, argv, LIMIT)
}

fn launch_for(p: &Project, enforce: &str, argv: &[&str], limit: Duration) -> Run {
    let mut args = vec!["launch", "--enforce", enforce, "--"];
    args.extend_from_slice(argv);
    run_limited(&mut p.aileron(&args), limit)
}

/// `aileron launch --enforce ENFORCE -- bash -c SCRIPT`, with `$W` the work directory.
fn launch_bash(p: &Project, enforce: &str, script: &str) -> Run {
    let mut cmd = p.aileron(&["launch", "--enforce", enforce, "--", "bash", "-c", script]);
    cmd.env("W", work(p));
    run_limited(&mut cmd, LIMIT)
}

/// A directory in the project for the attacks' files: writable in the
/// box, so that what keeps them from being made is the exec's decision.
fn work(p: &Project) -> PathBuf {
    let w = p.dir.join("w");
    std::fs::create_dir_all(&w).expect("work dir");
    w
}

fn s(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// The Python to run scripts with: a real interpreter, not a wrapper script.
fn python() -> &'static str {
    ["/usr/bin/python3", "/usr/local/bin/python3"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .unwrap_or("python3")
}

/// Writes `source` beside the project and compiles it with `cc`.
fn compile(p: &Project, name: &str, source: &str, flags: &[&str]) -> String {
    let dir = p.root.join("bin");
    std::fs::create_dir_all(&dir).expect("bin dir");
    let src = dir.join(format!("{name}.c"));
    std::fs::write(&src, source).expect("write source");
    let out = dir.join(name);
    let res = Command::new("cc")
        .args(["-O1", "-Wall", "-pthread"])
        .args(flags)
        .arg("-o")
        .arg(&out)
        .arg(&src)
        .output()
        .expect("run cc");
    assert!(
        res.status.success(),
        "cc {name}.c failed:\n{}",
        text(&res.stderr)
    );
    s(&out)
}

fn script(p: &Project, name: &str, source: &str) -> String {
    let path = p.root.join("bin").join(name);
    std::fs::create_dir_all(path.parent().unwrap()).expect("bin dir");
    std::fs::write(&path, source).expect("write script");
    s(&path)
}

fn set_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// The Landlock ABI version of this kernel (0: none).
fn landlock_abi() -> i64 {
    const CREATE_RULESET_VERSION: u32 = 1;
    // SAFETY: the version query reads no attribute.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            CREATE_RULESET_VERSION,
        )
    };
    v.max(0)
}

/// Waits up to `limit` for `path` to exist with some content.
fn wait_for(path: &Path, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if std::fs::metadata(path).is_ok_and(|m| m.len() > 0) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

// ---------------------------------------------------------------------------
// The audit log

/// The supervisor's refusals: deny lines, and asks that had no terminal to
/// ask on (which refuse).
fn supervisor_denials(p: &Project) -> Vec<Value> {
    p.audit()
        .into_iter()
        .filter(|r| {
            r["adapter"] == "supervisor"
                && (r["decision"] == "deny"
                    || (r["decision"] == "ask" && r["outcome"] == "no-terminal"))
        })
        .collect()
}

fn summary(r: &Value) -> &str {
    r["action"]["summary"].as_str().unwrap_or_default()
}

/// Asserts the supervisor denied `line` under the policy's `touch *` rule.
fn assert_denied_by_rule(p: &Project, line: &str) {
    let denials = supervisor_denials(p);
    let found = denials.iter().find(|r| summary(r) == line);
    let Some(r) = found else {
        panic!(
            "no supervisor deny line for {line:?}; the audit log has:\n{}",
            p.audit_text()
        );
    };
    assert_eq!(r["session"].as_str().map(str::len), Some(24), "{r}");
    assert!(
        r["rule"]
            .as_str()
            .is_some_and(|rule| rule.ends_with("aileron.yaml:deny[0]")),
        "{r}"
    );
    assert!(
        r["reason"].as_str().is_some_and(|w| w.contains("touch *")),
        "{r}"
    );
}

/// Asserts the supervisor refused an exec it could not decide, saying `why`.
fn assert_refused_because(p: &Project, why: &str, at_least: usize) {
    let n = supervisor_denials(p)
        .iter()
        .filter(|r| r["reason"].as_str().is_some_and(|w| w.contains(why)))
        .count();
    assert!(
        n >= at_least,
        "expected {at_least} supervisor deny line(s) saying {why:?}, found {n}; the audit log has:\n{}",
        p.audit_text()
    );
}

// ---------------------------------------------------------------------------
// Attack programs

/// `attack [-e VAR=VALUE]... MODE PATH ARGV0 [ARG...]`: starts a program
/// the way MODE says and prints `MODE: ran exit=N` or `MODE: errno=N`.
const ATTACK_C: &str = r#"
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;
static const char *mode, *path;
static char **args, **env;

/* A copy of PATH in a memory file, or in an unlinked file, opened. */
static int copy_of(const char *kind) {
    int in = open(path, O_RDONLY);
    if (in < 0) return -1;
    struct stat st;
    fstat(in, &st);
    int fd;
    if (!strncmp(kind, "memfd", 5)) {
        fd = memfd_create("payload", 0);
        if (fd < 0 || sendfile(fd, in, NULL, st.st_size) != st.st_size) return -1;
        close(in);
        return fd;
    }
    char tmp[] = "/tmp/aileron-attack-XXXXXX";
    fd = mkstemp(tmp);
    if (fd < 0) return -1;
    fchmod(fd, 0755);
    if (sendfile(fd, in, NULL, st.st_size) != st.st_size) return -1;
    close(fd);
    close(in);
    fd = open(tmp, O_RDONLY);
    unlink(tmp);
    return fd;
}

static int do_exec(void) {
    char p[64];
    if (!strcmp(mode, "fork") || !strcmp(mode, "direct") || !strcmp(mode, "thread"))
        return execve(path, args, env);
    if (!strcmp(mode, "procfd")) {
        int fd = open(path, O_PATH);
        if (fd < 0) return -1;
        snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
        return execve(p, args, env);
    }
    if (!strcmp(mode, "execveat")) {
        int fd = open(path, O_RDONLY);
        if (fd < 0) return -1;
        return syscall(SYS_execveat, fd, "", args, env, AT_EMPTY_PATH);
    }
    if (!strcmp(mode, "execveat-dir")) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", path);
        char *slash = strrchr(dir, '/');
        *slash = 0;
        int fd = open(dir, O_PATH | O_DIRECTORY);
        if (fd < 0) return -1;
        return syscall(SYS_execveat, fd, slash + 1, args, env, 0);
    }
    if (!strcmp(mode, "fexecve")) {
        int fd = open(path, O_RDONLY);
        if (fd < 0) return -1;
        return fexecve(fd, args, env);
    }
    if (!strcmp(mode, "memfd-execveat") || !strcmp(mode, "deleted-execveat")) {
        int fd = copy_of(mode);
        if (fd < 0) return -1;
        return syscall(SYS_execveat, fd, "", args, env, AT_EMPTY_PATH);
    }
    if (!strcmp(mode, "memfd-fexecve")) {
        int fd = copy_of("memfd");
        if (fd < 0) return -1;
        return fexecve(fd, args, env);
    }
    if (!strcmp(mode, "memfd-procfd")) {
        int fd = copy_of("memfd");
        if (fd < 0) return -1;
        snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
        return execve(p, args, env);
    }
    errno = EINVAL;
    return -1;
}

static void *thread_exec(void *unused) {
    (void)unused;
    do_exec();
    return (void *)(long)errno;
}

static void report_status(int st) {
    if (WIFEXITED(st))
        printf("%s: ran exit=%d\n", mode, WEXITSTATUS(st));
    else
        printf("%s: signal=%d\n", mode, WTERMSIG(st));
}

int main(int argc, char **argv) {
    int i = 1, extra = 0;
    while (i + 1 < argc && !strcmp(argv[i], "-e")) {
        extra++;
        i += 2;
    }
    if (argc - i < 3) {
        fprintf(stderr, "usage: attack [-e VAR=VALUE]... MODE PATH ARGV0 [ARG...]\n");
        return 2;
    }
    int n = 0;
    while (environ[n]) n++;
    env = calloc(n + extra + 1, sizeof *env);
    for (int k = 0; k < extra; k++) env[k] = argv[2 + 2 * k];
    memcpy(env + extra, environ, n * sizeof *env);
    mode = argv[i];
    path = argv[i + 1];
    args = argv + i + 2;
    setvbuf(stdout, NULL, _IONBF, 0);

    if (!strcmp(mode, "direct")) {
        do_exec();
        printf("%s: errno=%d\n", mode, errno);
        return 1;
    }
    if (!strcmp(mode, "spawn")) {
        pid_t pid;
        int e = posix_spawn(&pid, path, NULL, NULL, args, env);
        if (e) {
            printf("%s: errno=%d\n", mode, e);
            return 0;
        }
        int st;
        waitpid(pid, &st, 0);
        report_status(st);
        return 0;
    }
    if (!strcmp(mode, "thread")) {
        /* From the second thread of a process whose first one waits. */
        pid_t pid = fork();
        if (pid == 0) {
            pthread_t t;
            void *err;
            pthread_create(&t, NULL, thread_exec, NULL);
            pthread_join(t, &err);
            _exit(100 + (int)(long)err);
        }
        int st;
        waitpid(pid, &st, 0);
        if (WIFEXITED(st) && WEXITSTATUS(st) >= 100)
            printf("%s: errno=%d\n", mode, WEXITSTATUS(st) - 100);
        else
            report_status(st);
        return 0;
    }
    /* The rest in a forked child; a close-on-exec pipe carries the
     * exec's errno back. */
    int p[2];
    if (pipe2(p, O_CLOEXEC)) return 2;
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        do_exec();
        int e = errno;
        if (write(p[1], &e, sizeof e) < 0) _exit(126);
        _exit(127);
    }
    close(p[1]);
    int e = 0;
    ssize_t got = read(p[0], &e, sizeof e);
    int st;
    waitpid(pid, &st, 0);
    if (got == (ssize_t)sizeof e)
        printf("%s: errno=%d\n", mode, e);
    else
        report_status(st);
    return 0;
}
"#;

/// `race fork|vfork|spawn argv|path N A B ARG`: N execs from children
/// started with fork (argv in a shared mapping), vfork or posix_spawn,
/// while a second thread flips, in the memory the child execs from,
/// `argv`: argv[1] between A and B (the program is ARG), or `path`: the
/// program's path between A and B (argv is A ARG; A and B may differ
/// within one aligned 8-byte word only, so each flip is one store).
const RACE_C: &str = r#"
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

struct shared {
    char *argv[3];
    _Alignas(8) char path[4096];
    char a[4096];
    char b[4096];
    char arg[4096];
};
static struct shared *s;
static int flip_path;
static size_t word;
static uint64_t wa, wb;
static atomic_int stop;

static void *flipper(void *unused) {
    (void)unused;
    volatile uint64_t *w = (volatile uint64_t *)(s->path + word);
    char *volatile *p = &s->argv[1];
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        if (flip_path) {
            *w = wa;
            *w = wb;
        } else {
            *p = s->a;
            *p = s->b;
        }
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 7) {
        fprintf(stderr, "usage: race fork|vfork|spawn argv|path N A B ARG\n");
        return 2;
    }
    const char *how = argv[1];
    flip_path = !strcmp(argv[2], "path");
    int n = atoi(argv[3]);
    s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (s == MAP_FAILED) return 2;
    snprintf(s->a, sizeof s->a, "%s", argv[4]);
    snprintf(s->b, sizeof s->b, "%s", argv[5]);
    snprintf(s->arg, sizeof s->arg, "%s", argv[6]);
    if (flip_path) {
        size_t la = strlen(s->a) + 1, lb = strlen(s->b) + 1, first = 0;
        while (s->a[first] == s->b[first]) first++;
        word = first & ~(size_t)7;
        if ((la > lb ? la : lb) > word + 8) {
            fprintf(stderr, "race: %s and %s differ beyond one word\n", s->a, s->b);
            return 2;
        }
        memcpy(s->path, s->a, la);
        memcpy(&wa, s->a + word, 8);
        memcpy(&wb, s->b + word, 8);
        s->argv[0] = s->a;
        s->argv[1] = s->arg;
    } else {
        snprintf(s->path, sizeof s->path, "%s", s->arg);
        s->argv[0] = s->arg;
        s->argv[1] = s->a;
    }
    s->argv[2] = NULL;
    pthread_t t;
    pthread_create(&t, NULL, flipper, NULL);
    int ran = 0, refused = 0, killed = 0, other = 0;
    for (int i = 0; i < n; i++) {
        pid_t pid;
        if (!strcmp(how, "spawn")) {
            int e = posix_spawn(&pid, s->path, NULL, NULL, s->argv, environ);
            if (e) {
                if (e == EACCES) refused++;
                else other++;
                continue;
            }
        } else {
            pid = !strcmp(how, "vfork") ? vfork() : fork();
            if (pid == 0) {
                execve(s->path, s->argv, environ);
                _exit(errno == EACCES ? 126 : 127);
            }
        }
        int st;
        if (waitpid(pid, &st, 0) != pid) {
            other++;
            continue;
        }
        if (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL) killed++;
        else if (WIFEXITED(st) && WEXITSTATUS(st) == 126) refused++;
        else if (WIFEXITED(st) && WEXITSTATUS(st) == 0) ran++;
        else other++;
    }
    atomic_store(&stop, 1);
    pthread_join(t, NULL);
    printf("ran=%d refused=%d killed=%d other=%d\n", ran, refused, killed, other);
    return 0;
}
"#;

/// `procmem N PROGRAM ALLOWED FORBIDDEN`: N times, starts `PROGRAM
/// ALLOWED` and, once the child runs PROGRAM untraced (the supervisor has
/// checked it and let go), writes FORBIDDEN over ALLOWED in its arguments
/// through /proc/PID/mem. Prints `wrote=N`.
const PROCMEM_C: &str = r#"
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static long tracer(pid_t pid) {
    char p[64], buf[4096];
    snprintf(p, sizeof p, "/proc/%d/status", pid);
    int fd = open(p, O_RDONLY);
    if (fd < 0) return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return -1;
    buf[n] = 0;
    char *at = strstr(buf, "TracerPid:");
    return at ? atol(at + 10) : -1;
}

/* Field 48 of /proc/PID/stat: where the arguments start. */
static unsigned long arg_start(pid_t pid) {
    char p[64], buf[4096];
    snprintf(p, sizeof p, "/proc/%d/stat", pid);
    int fd = open(p, O_RDONLY);
    if (fd < 0) return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return 0;
    buf[n] = 0;
    char *s = strrchr(buf, ')');
    int f = 2;
    for (; *s && f < 48; s++)
        if (*s == ' ') f++;
    return strtoul(s, NULL, 10);
}

int main(int argc, char **argv) {
    if (argc != 5 || strlen(argv[3]) != strlen(argv[4])) {
        fprintf(stderr, "usage: procmem N PROGRAM ALLOWED FORBIDDEN (same length)\n");
        return 2;
    }
    int n = atoi(argv[1]), wrote = 0;
    const char *prog = argv[2], *forbidden = argv[4];
    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            char *args[] = {(char *)prog, argv[3], NULL};
            execve(prog, args, environ);
            _exit(126);
        }
        char exe[64], target[4096];
        snprintf(exe, sizeof exe, "/proc/%d/exe", pid);
        struct timespec t0, t;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (;;) {
            ssize_t l = readlink(exe, target, sizeof target - 1);
            if (l < 0) break;
            target[l] = 0;
            if (!strcmp(target, prog) && tracer(pid) == 0) {
                unsigned long at = arg_start(pid) + strlen(prog) + 1;
                char mem[64];
                snprintf(mem, sizeof mem, "/proc/%d/mem", pid);
                int fd = open(mem, O_RDWR);
                if (fd >= 0 && pwrite(fd, forbidden, strlen(forbidden), at) > 0) wrote++;
                if (fd >= 0) close(fd);
                break;
            }
            clock_gettime(CLOCK_MONOTONIC, &t);
            if (t.tv_sec - t0.tv_sec > 2) break;
        }
        waitpid(pid, NULL, 0);
    }
    printf("wrote=%d\n", wrote);
    return 0;
}
"#;

/// `probe DIR|- [TARGET]`: the system calls that change another process's
/// memory or the mount table (on DIR; `-` skips them), each as `NAME:
/// ok` or `NAME: errno=N`; with TARGET, an i386 `execve` of `touch TARGET`.
const PROBE_C: &str = r#"
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static void report(const char *name, long r) {
    if (r < 0) printf("%s: errno=%d\n", name, errno);
    else printf("%s: ok\n", name);
}

static int child_fn(void *arg) {
    (void)arg;
    _exit(0);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IONBF, 0);
    const char *dir = argc > 1 ? argv[1] : "-";
    pid_t victim = fork();
    if (victim == 0) {
        pause();
        _exit(0);
    }
    static char word[16] = "original";
    long r = ptrace(PTRACE_ATTACH, victim, 0, 0);
    report("ptrace_attach", r);
    if (r == 0) {
        waitpid(victim, NULL, 0);
        ptrace(PTRACE_DETACH, victim, 0, 0);
    }
    char repl[16] = "changed";
    struct iovec local = {repl, sizeof repl}, remote = {word, sizeof word};
    report("process_vm_writev", process_vm_writev(victim, &local, 1, &remote, 1, 0));
    kill(victim, SIGKILL);
    waitpid(victim, NULL, 0);

    char params[120] = {0};
    report("io_uring_setup", syscall(SYS_io_uring_setup, 4, params));
    if (strcmp(dir, "-")) {
        report("mount", mount("tmpfs", dir, "tmpfs", 0, NULL));
        report("umount2", umount2(dir, MNT_DETACH));
        report("open_tree", syscall(SYS_open_tree, AT_FDCWD, dir, 1));
        report("fsopen", syscall(SYS_fsopen, "tmpfs", 0));
    }
    uint64_t args[11] = {0};
    args[4] = SIGCHLD;
    long c3 = syscall(SYS_clone3, args, sizeof args);
    if (c3 == 0) _exit(0);
    report("clone3", c3);
    if (c3 > 0) waitpid(c3, NULL, 0);

    static char stack[65536];
    int pid = clone(child_fn, stack + sizeof stack, CLONE_VM | SIGCHLD, NULL);
    report("clone_vm", pid);
    if (pid > 0) waitpid(pid, NULL, 0);
    pid = clone(child_fn, stack + sizeof stack, CLONE_VM | CLONE_VFORK | CLONE_PARENT | SIGCHLD, NULL);
    report("clone_vm_vfork_parent", pid);
    if (pid > 0) waitpid(pid, NULL, 0);
    pid = clone(child_fn, stack + sizeof stack, CLONE_VM | CLONE_VFORK | SIGCHLD, NULL);
    report("clone_vm_vfork", pid);
    if (pid > 0) waitpid(pid, NULL, 0);
    pid = fork();
    if (pid == 0) _exit(0);
    report("fork", pid);
    if (pid > 0) waitpid(pid, NULL, 0);
#if defined(__x86_64__)
    if (argc > 2) {
        char *low = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
        uint32_t *vec = (uint32_t *)low;
        char *p = low + 64, *a1 = low + 128;
        strcpy(p, "/usr/bin/touch");
        snprintf(a1, 2048, "%s", argv[2]);
        vec[0] = (uint32_t)(uintptr_t)p;
        vec[1] = (uint32_t)(uintptr_t)a1;
        vec[2] = 0;
        pid = fork();
        if (pid == 0) {
            long ret;
            __asm__ volatile("int $0x80"
                             : "=a"(ret)
                             : "a"(11), "b"((uint32_t)(uintptr_t)p),
                               "c"((uint32_t)(uintptr_t)vec), "d"(0)
                             : "memory");
            _exit(ret < 0 && -ret < 100 ? 100 + (int)-ret : 99);
        }
        int st;
        waitpid(pid, &st, 0);
        if (WIFEXITED(st) && WEXITSTATUS(st) > 100)
            printf("int80_execve: errno=%d\n", WEXITSTATUS(st) - 100);
        else
            printf("int80_execve: status=%d\n", st);
    }
#endif
    return 0;
}
"#;

/// A shared library whose constructor creates `$MARKER`, with no exec.
const EVIL_SO_C: &str = r#"
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
__attribute__((constructor)) static void hit(void) {
    const char *m = getenv("MARKER");
    if (m) close(open(m, O_WRONLY | O_CREAT, 0644));
}
"#;

// ---------------------------------------------------------------------------
// 1. A program that calls execve itself, as Codex does

#[test]
fn a_program_that_calls_execve_itself_cannot_start_a_denied_program() {
    let p = Project::new(POLICY);
    let w = work(&p);
    let attack = compile(&p, "attack", ATTACK_C, &[]);
    for enforce in ["exec", "all"] {
        for mode in ["direct", "fork", "spawn"] {
            let forbidden = s(&w.join(format!("{enforce}-{mode}")));
            let out = launch(
                &p,
                enforce,
                &[&attack, mode, "/usr/bin/touch", "touch", &forbidden],
            );
            assert_eq!(out.result(mode), "errno=13", "{}", out.show());
            assert!(
                !Path::new(&forbidden).exists(),
                "{mode} created {forbidden}"
            );
            assert_denied_by_rule(&p, &format!("touch {forbidden}"));
            // The same program, the same way, with an allowed command.
            let allowed = s(&w.join(format!("ok-{enforce}-{mode}")));
            let out = launch(
                &p,
                enforce,
                &[&attack, mode, "/usr/bin/mkdir", "mkdir", &allowed],
            );
            if mode == "direct" {
                assert_eq!(out.code(), Some(0), "{}", out.show());
            } else {
                assert_eq!(out.result(mode), "ran exit=0", "{}", out.show());
            }
            assert!(Path::new(&allowed).is_dir(), "{}", out.show());
        }
    }
    // Without enforcement the attack works: the check above is what stops it.
    let forbidden = s(&w.join("none-fork"));
    let out = launch(
        &p,
        "none",
        &[&attack, "fork", "/usr/bin/touch", "touch", &forbidden],
    );
    assert_eq!(out.result("fork"), "ran exit=0", "{}", out.show());
    assert!(Path::new(&forbidden).exists());
}

#[test]
fn an_exec_from_a_second_thread_is_refused_and_says_why() {
    let p = Project::new(POLICY);
    let w = work(&p);
    let attack = compile(&p, "attack", ATTACK_C, &[]);
    let forbidden = s(&w.join("thread"));
    let out = launch(
        &p,
        "all",
        &[&attack, "thread", "/usr/bin/touch", "touch", &forbidden],
    );
    assert_eq!(out.result("thread"), "errno=13", "{}", out.show());
    assert!(!Path::new(&forbidden).exists());
    assert_refused_because(&p, "thread other than its process's first", 1);
}

// ---------------------------------------------------------------------------
// 2. Interpreters, wrappers, daemons

const EXECS_PY: &str = r#"
import os, subprocess, sys
out = sys.argv[1]
def result(name, f):
    try:
        print(f"{name}: {f()}", flush=True)
    except OSError as e:
        print(f"{name}: errno={e.errno}", flush=True)
def fork_exec(path, argv):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            os.execv(path, argv)
        except OSError as e:
            os.write(w, str(e.errno).encode())
        os._exit(127)
    os.close(w)
    err = os.read(r, 16)
    os.waitpid(pid, 0)
    return f"errno={err.decode()}" if err else "ran"
def spawn(path, argv):
    pid = os.posix_spawn(path, argv, os.environ)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
result("system", lambda: os.waitstatus_to_exitcode(os.system(f"touch {out}/system")))
result("subprocess", lambda: subprocess.run(["touch", f"{out}/subprocess"]).returncode)
result("shell", lambda: subprocess.run(f"touch {out}/shell", shell=True).returncode)
result("posix_spawn", lambda: spawn("/usr/bin/touch", ["touch", f"{out}/posix_spawn"]))
result("fork_execv", lambda: fork_exec("/usr/bin/touch", ["touch", f"{out}/fork_execv"]))
result("fork_env", lambda: fork_exec("/usr/bin/env", ["env", "touch", f"{out}/fork_env"]))
result("ok_subprocess", lambda: subprocess.run(["mkdir", f"{out}/ok_subprocess"]).returncode)
result("ok_fork_execv", lambda: fork_exec("/usr/bin/mkdir", ["mkdir", f"{out}/ok_fork_execv"]))
result("ok_system", lambda: os.waitstatus_to_exitcode(os.system(f"mkdir {out}/ok_system")))
"#;

#[test]
fn python_s_ways_of_starting_a_program_are_all_decided() {
    let p = Project::new(POLICY);
    let w = work(&p);
    let py = script(&p, "execs.py", EXECS_PY);
    let out = launch(&p, "all", &[python(), &py, &s(&w)]);
    assert_eq!(out.code(), Some(0), "{}", out.show());
    for (name, expect) in [
        ("system", "127"),
        ("subprocess", "errno=13"),
        ("shell", "errno=13"),
        ("posix_spawn", "errno=13"),
        ("fork_execv", "errno=13"),
        ("fork_env", "errno=13"),
        ("ok_subprocess", "0"),
        ("ok_fork_execv", "ran"),
        ("ok_system", "0"),
    ] {
        assert_eq!(out.result(name), expect, "{name}\n{}", out.show());
        let made = w.join(name).exists();
        assert_eq!(made, name.starts_with("ok_"), "{name}: {}", out.show());
    }
    for name in ["subprocess", "posix_spawn", "fork_execv", "fork_env"] {
        assert_denied_by_rule(&p, &format!("touch {}/{name}", w.display()));
    }
}

#[test]
fn wrappers_do_not_launder_a_denied_program() {
    let p = Project::new(POLICY);
    let w = work(&p);
    // A script the wrapper runs: the wrapper's line does not show `touch`.
    let sh = script(&p, "make-file.sh", "touch \"$1\"\n");
    std::os::unix::fs::symlink("/usr/bin/touch", w.join("ls")).unwrap();
    let attacks = [
        ("env_i", "env -i /usr/bin/touch \"$W/env_i\""),
        ("setsid", "setsid touch \"$W/setsid\""),
        ("setsid_sh", "setsid sh \"$S\" \"$W/setsid_sh\""),
        ("nohup_sh", "nohup sh \"$S\" \"$W/nohup_sh\" 2>/dev/null"),
        ("timeout", "timeout 5 touch \"$W/timeout\""),
        ("nice", "nice -n 1 touch \"$W/nice\""),
        ("xargs", "echo \"$W/xargs\" | xargs touch"),
        (
            "find_exec",
            "find \"$W\" -maxdepth 0 -exec touch \"$W/find_exec\" ';'",
        ),
        ("exec_a", "(exec -a ls /usr/bin/touch \"$W/exec_a\")"),
        ("symlink", "\"$W/ls\" \"$W/symlink\""),
        ("sh_c", "sh -c 'touch \"$1\"' sh \"$W/sh_c\""),
        ("pipe_sh", "echo \"touch $W/pipe_sh\" | sh"),
    ];
    let mut script_text = String::new();
    for (name, line) in attacks {
        script_text.push_str(&format!("{line}; echo \"{name}=$?\"\n"));
    }
    script_text.push_str("mkdir \"$W/allowed\"; echo \"allowed=$?\"\nsleep 0.2\n");
    let mut cmd = p.aileron(&[
        "launch",
        "--enforce",
        "all",
        "--",
        "bash",
        "-c",
        &script_text,
    ]);
    cmd.env("W", &w).env("S", &sh);
    let out = run_limited(&mut cmd, LIMIT);
    for (name, _) in attacks {
        assert!(!w.join(name).exists(), "{name} ran touch:\n{}", out.show());
        assert!(
            !out.stdout.contains(&format!("{name}=0\n")),
            "{name} succeeded:\n{}",
            out.show()
        );
    }
    assert!(out.stdout.contains("allowed=0\n"), "{}", out.show());
    assert!(w.join("allowed").is_dir());
    // Where the wrapper's own line was allowed, its exec of touch was not.
    for name in ["setsid_sh", "nohup_sh", "symlink"] {
        let rec = supervisor_denials(&p)
            .into_iter()
            .find(|r| summary(r).contains(&format!("{}/{name}", w.display())));
        assert!(
            rec.is_some(),
            "no supervisor deny line for {name}:\n{}",
            p.audit_text()
        );
    }
}

const DAEMON_PY: &str = r#"
import os, subprocess, sys, time
out, wait = sys.argv[1], sys.argv[2] == "wait"
def ppid(pid):
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])
# aileron launch: the parent of the process that waits for this agent.
supervisor = ppid(os.getppid())
def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
pid = os.fork()
if pid == 0:
    os.setsid()
    if os.fork():
        os._exit(0)
    null = os.open("/dev/null", os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    open(f"{out}/daemon-started", "w").close()
    if not wait:
        deadline = time.time() + 10
        while alive(supervisor) and time.time() < deadline:
            time.sleep(0.02)
        open(f"{out}/supervisor-gone", "w").write(str(not alive(supervisor)))
    try:
        allowed = str(subprocess.run(["mkdir", f"{out}/ok-daemon"]).returncode)
    except OSError as e:
        allowed = f"errno={e.errno}"
    try:
        os.execv("/usr/bin/touch", ["touch", f"{out}/forbidden"])
    except OSError as e:
        res = f"errno={e.errno}"
    with open(f"{out}/daemon-tmp", "w") as f:
        f.write(f"allowed={allowed} touch={res}\n")
    os.rename(f"{out}/daemon-tmp", f"{out}/daemon-result")
    os._exit(0)
os.waitpid(pid, 0)
if wait:
    deadline = time.time() + 10
    while not os.path.exists(f"{out}/daemon-result") and time.time() < deadline:
        time.sleep(0.02)
print("agent done", flush=True)
"#;

#[test]
fn a_daemonized_grandchild_is_still_decided() {
    let p = Project::new(POLICY);
    let w = work(&p);
    let py = script(&p, "daemon.py", DAEMON_PY);
    let out = launch(&p, "all", &[python(), &py, &s(&w), "wait"]);
    assert_eq!(out.code(), Some(0), "{}", out.show());
    let result = w.join("daemon-result");
    assert!(wait_for(&result, Duration::from_secs(5)), "{}", out.show());
    let result = std::fs::read_to_string(result).unwrap();
    assert_eq!(result, "allowed=0 touch=errno=13\n");
    assert!(!w.join("forbidden").exists());
    assert!(w.join("ok-daemon").is_dir());
    assert_denied_by_rule(&p, &format!("touch {}/forbidden", w.display()));
}

#[test]
fn a_daemon_that_outlives_the_session_cannot_exec_anything() {
    let p = Project::new(POLICY);
    let w = work(&p);
    let py = script(&p, "daemon.py", DAEMON_PY);
    // Without the box: in it, the daemon dies with the session's PID
    // namespace (box_attacks.rs); here it lives on, and execs nothing.
    let out = launch(&p, "exec", &[python(), &py, &s(&w), "nowait"]);
    assert_eq!(out.code(), Some(0), "{}", out.show());
    assert!(w.join("daemon-started").exists(), "{}", out.show());
    let result = w.join("daemon-result");
    assert!(
        wait_for(&result, Duration::from_secs(10)),
        "the daemon never reported"
    );
    let result = std::fs::read_to_string(result).unwrap();
    assert_eq!(
        std::fs::read_to_string(w.join("supervisor-gone"))
            .ok()
            .as_deref(),
        Some("True"),
        "the daemon did not see the session end"
    );
    assert!(!w.join("forbidden").exists(), "{result}");
    assert!(!w.join("ok-daemon").exists(), "{result}");
    assert!(
        result.starts_with("allowed=errno=") && result.contains(" touch=errno="),
        "{result}"
    );
}

// ---------------------------------------------------------------------------
// 3. Descriptors instead of paths

#[test]
fn an_exec_through_a_descriptor_is_decided_by_the_file_it_names() {
    let p = Project::new(POLICY);
    let w = work(&p);
    let attack = compile(&p, "attack", ATTACK_C, &[]);
    for mode in ["procfd", "execveat", "execveat-dir", "fexecve"] {
        let forbidden = s(&w.join(mode));
        // argv[0] says ls; the file is touch.
        let out = launch(
            &p,
            "all",
            &[&attack, mode, "/usr/bin/touch", "ls", &forbidden],
        );
        assert_eq!(out.result(mode), "errno=13", "{}", out.show());
        assert!(!Path::new(&forbidden).exists(), "{mode}");
        let line = format!("ls {forbidden} ; touch {forbidden}");
        assert!(
            supervisor_denials(&p)
                .iter()
                .any(|r| r["action"]["facets"]["shell"]["line"] == line.as_str()),
            "{mode}: no deny line for {line:?}:\n{}",
            p.audit_text()
        );
        let allowed = s(&w.join(format!("ok-{mode}")));
        let out = launch(
            &p,
            "all",
            &[&attack, mode, "/usr/bin/mkdir", "mkdir", &allowed],
        );
        assert_eq!(out.result(mode), "ran exit=0", "{}", out.show());
        assert!(Path::new(&allowed).is_dir(), "{mode}");
    }
}

// ---------------------------------------------------------------------------
// 4. A program with no path

#[test]
fn a_memory_file_cannot_be_executed_and_the_log_says_why() {
    let p = Project::new(POLICY);
    let attack = compile(&p, "attack", ATTACK_C, &[]);
    let modes = ["memfd-procfd", "memfd-execveat", "memfd-fexecve"];
    // `true`, which the policy allows: only that it has no path is refused.
    let mut results = Vec::new();
    for mode in modes {
        let out = launch(&p, "all", &[&attack, mode, "/usr/bin/true", "true"]);
        results.push(format!("{mode}: {}", out.result(mode)));
    }
    let log = p.audit_text();
    assert_eq!(
        results,
        modes.map(|m| format!("{m}: errno=13")),
        "the audit log has:\n{log}"
    );
    assert_refused_because(&p, "memory file with no path", modes.len());
    // Without enforcement the memory file runs: the refusal is the supervisor's.
    let out = launch(
        &p,
        "none",
        &[&attack, "memfd-execveat", "/usr/bin/true", "true"],
    );
    assert_eq!(out.result("memfd-execveat"), "ran exit=0", "{}", out.show());
}

#[test]
fn a_deleted_copy_of_a_denied_program_does_not_run() {
    let p = Project::new(POLICY);
    let w = work(&p);
    let attack = compile(&p, "attack", ATTACK_C, &[]);
    let forbidden = s(&w.join("deleted"));
    let out = launch(
        &p,
        "all",
        &[
            &attack,
            "deleted-execveat",
            "/usr/bin/touch",
            "touch",
            &forbidden,
        ],
    );
    assert!(
        out.result("deleted-execveat").starts_with("errno="),
        "{}",
        out.show()
    );
    assert!(!Path::new(&forbidden).exists());
}

// ---------------------------------------------------------------------------
// 5. Time of check, time of use

/// Runs the race program with each of fork, vfork and posix_spawn at once;
/// `args(how)` gives its A, B and ARG.
fn race_all(
    p: &Project,
    race: &str,
    what: &str,
    args: impl Fn(&str) -> [String; 3] + Sync,
) -> Vec<(String, Run)> {
    let args = &args;
    std::thread::scope(|scope| {
        let handles: Vec<_> = ["fork", "vfork", "spawn"]
            .into_iter()
            .map(|how| {
                scope.spawn(move || {
                    let [a, b, arg] = args(how);
                    let run = launch_for(
                        p,
                        "all",
                        &[race, how, what, "300", &a, &b, &arg],
                        RACE_LIMIT,
                    );
                    (how.to_owned(), run)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

/// `ran=N refused=N killed=N other=N` as numbers.
fn race_counts(run: &Run) -> Option<[u32; 4]> {
    let line = run.stdout.lines().find(|l| l.starts_with("ran="))?;
    let mut v = line
        .split_whitespace()
        .filter_map(|kv| kv.split_once('=')?.1.parse().ok());
    Some([v.next()?, v.next()?, v.next()?, v.next()?])
}

#[test]
fn an_argument_flipped_by_another_thread_never_reaches_the_program() {
    let p = Project::new("version: 1\ndefault: allow\ndeny: [\"touch *forbidden*\"]\n");
    let w = work(&p);
    let race = compile(&p, "race", RACE_C, &[]);
    let runs = race_all(&p, &race, "argv", |how| {
        [
            s(&w.join(format!("allowed00-{how}"))),
            s(&w.join(format!("forbidden-{how}"))),
            "/usr/bin/touch".to_owned(),
        ]
    });
    let mut report = String::new();
    for (how, run) in &runs {
        report.push_str(&format!("== {how}\n{}", run.show()));
    }
    for how in ["fork", "vfork", "spawn"] {
        assert!(
            !w.join(format!("forbidden-{how}")).exists(),
            "{how}: touch ran with the forbidden argument:\n{report}"
        );
    }
    for (how, run) in &runs {
        assert!(
            !run.timed_out,
            "{how}: the race did not finish within {RACE_LIMIT:?} (the supervisor killed a \
             process whose arguments changed; does its parent ever get it back?)\n{report}\nthe \
             audit log's refusals:\n{}",
            supervisor_denials(&p)
                .iter()
                .filter(|r| r["rule"].is_null())
                .map(|r| format!("{}\n", r["reason"]))
                .collect::<String>()
        );
        let [ran, refused, killed, _] = race_counts(run).unwrap_or_else(|| panic!("{report}"));
        assert!(ran > 0, "{how}: nothing allowed ran\n{report}");
        assert!(
            refused + killed > 0,
            "{how}: the race was never lost\n{report}"
        );
    }
}

#[test]
fn a_program_path_flipped_by_another_thread_never_runs() {
    let p = Project::new(POLICY);
    let w = work(&p);
    let race = compile(&p, "race", RACE_C, &[]);
    let runs = race_all(&p, &race, "path", |how| {
        [
            "/usr/bin/ls".to_owned(),
            "/usr/bin/touch".to_owned(),
            s(&w.join(format!("forbidden-{how}"))),
        ]
    });
    let mut report = String::new();
    for (how, run) in &runs {
        report.push_str(&format!("== {how}\n{}", run.show()));
    }
    for how in ["fork", "vfork", "spawn"] {
        assert!(
            !w.join(format!("forbidden-{how}")).exists(),
            "{how}: touch ran:\n{report}"
        );
    }
    for (how, run) in &runs {
        assert!(
            !run.timed_out,
            "{how}: the race did not finish within {RACE_LIMIT:?} (the supervisor killed a \
             process whose program changed; does its parent ever get it back?)\n{report}\n{}",
            p.audit_text()
                .lines()
                .filter(|l| l.contains("changed after"))
                .collect::<Vec<_>>()
                .join("\n")
        );
        let [_, refused, killed, _] = race_counts(run).unwrap_or_else(|| panic!("{report}"));
        assert!(
            refused + killed > 0,
            "{how}: the race was never lost\n{report}"
        );
    }
}

#[test]
fn a_path_flipped_from_a_harmless_script_to_a_denied_program_never_runs_it() {
    let p = Project::new(POLICY);
    let w = work(&p);
    let race = compile(&p, "race", RACE_C, &[]);
    // A harmless script the policy allows, and a link to touch beside it;
    // the names differ within one aligned 8-byte word of the path.
    let decoy = w.join("decoy");
    std::fs::write(&decoy, "#!/bin/sh\nexit 0\n").unwrap();
    set_executable(&decoy);
    std::os::unix::fs::symlink("/usr/bin/touch", w.join("touch")).unwrap();
    let mut prefix = format!("{}/", w.display());
    while prefix.len() % 8 != 0 {
        prefix.push('/');
    }
    let a = format!("{prefix}decoy");
    let b = format!("{prefix}touch");
    let runs = race_all(&p, &race, "path", |how| {
        [a.clone(), b.clone(), s(&w.join(format!("forbidden-{how}")))]
    });
    let mut report = String::new();
    for (how, run) in &runs {
        report.push_str(&format!("== {how}\n{}", run.show()));
    }
    for how in ["fork", "vfork", "spawn"] {
        assert!(
            !w.join(format!("forbidden-{how}")).exists(),
            "{how}: touch ran, decided as the script `decoy`:\n{report}"
        );
    }
    for (how, run) in &runs {
        assert!(!run.timed_out, "{how}\n{report}");
        let [ran, refused, killed, _] = race_counts(run).unwrap_or_else(|| panic!("{report}"));
        assert!(ran > 0, "{how}: the script never ran\n{report}");
        assert!(
            refused + killed > 0,
            "{how}: the race was never lost\n{report}"
        );
    }
}

#[test]
fn arguments_rewritten_through_proc_pid_mem_after_the_check_never_reach_the_program() {
    let p = Project::new("version: 1\ndefault: allow\ndeny: [\"touch *forbidden*\"]\n");
    let w = work(&p);
    let procmem = compile(&p, "procmem", PROCMEM_C, &[]);
    let allowed = s(&w.join("allowed00"));
    let forbidden = s(&w.join("forbidden"));
    let out = launch(
        &p,
        "all",
        &[&procmem, "20", "/usr/bin/touch", &allowed, &forbidden],
    );
    assert_eq!(out.code(), Some(0), "{}", out.show());
    assert!(
        !Path::new(&forbidden).exists(),
        "touch ran with an argument written into it through /proc/PID/mem after the \
         supervisor had checked `touch {allowed}` ({}); the audit log has no line for it:\n{}",
        out.stdout.trim(),
        p.audit_text()
            .lines()
            .filter(|l| l.contains("forbidden"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

// ---------------------------------------------------------------------------
// Programs the kernel starts without an exec of their own

#[test]
fn a_script_whose_interpreter_is_a_denied_program_does_not_run_it() {
    let p = Project::new(POLICY);
    let w = work(&p);
    for (name, shebang) in [
        ("direct", "#!/usr/bin/touch\n"),
        ("env", "#!/usr/bin/env touch\n"),
        ("sh", "#!/bin/sh\ntouch \"$1\"\n"),
    ] {
        let script = w.join(format!("innocent-{name}"));
        std::fs::write(&script, shebang).unwrap();
        set_executable(&script);
    }
    let out = launch_bash(
        &p,
        "all",
        r#"for n in direct env sh; do "$W/innocent-$n" "$W/forbidden-$n"; echo "$n=$?"; done"#,
    );
    for name in ["sh", "env", "direct"] {
        assert!(
            !w.join(format!("forbidden-{name}")).exists(),
            "`#!` {name}: touch ran as the interpreter of a script decided as `innocent-{name}`:\n{}\n{}",
            out.show(),
            p.audit_text()
        );
    }
}

#[test]
fn the_dynamic_loader_does_not_launder_a_denied_program() {
    let p = Project::new(POLICY);
    let w = work(&p);
    let Some(loader) = [
        "/lib64/ld-linux-x86-64.so.2",
        "/lib/ld-linux-aarch64.so.1",
        "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
    ]
    .into_iter()
    .find(|l| Path::new(l).exists()) else {
        eprintln!("no glibc dynamic loader here; nothing to test");
        return;
    };
    let forbidden = s(&w.join("forbidden"));
    let out = launch(
        &p,
        "all",
        &[
            "bash",
            "-c",
            &format!("{loader} /usr/bin/touch {forbidden}; {loader} /usr/bin/mkdir {forbidden}.ok"),
        ],
    );
    assert!(
        !Path::new(&forbidden).exists(),
        "touch ran through {loader}:\n{}\n{}",
        out.show(),
        p.audit_text()
    );
    assert!(
        Path::new(&format!("{forbidden}.ok")).is_dir(),
        "{}",
        out.show()
    );
}

// ---------------------------------------------------------------------------
// 6. Aileron's files

const WRITES_PY: &str = r#"
import ctypes, errno, mmap, os, sys
new = sys.argv[1]
def attempt(name, f):
    try:
        f()
        print(f"{name}: ok", flush=True)
    except OSError as e:
        print(f"{name}: {errno.errorcode.get(e.errno, e.errno)}", flush=True)
def append():
    with open("aileron.yaml", "a") as f:
        f.write("allow: ['*']\n")
def overwrite():
    with open("aileron.yaml", "w") as f:
        f.write("version: 1\ndefault: allow\n")
def rename_over():
    os.rename(new, "aileron.yaml")
def unlink():
    os.unlink("aileron.yaml")
def link_then_write():
    os.link("aileron.yaml", "alias.yaml")
    with open("alias.yaml", "a") as f:
        f.write("x: 1\n")
def symlink_over():
    os.symlink(new, "tmp-link")
    os.rename("tmp-link", "aileron.yaml")
def truncate():
    os.truncate("aileron.yaml", 0)
def chmod():
    os.chmod("aileron.yaml", 0o666)
def mmap_write():
    fd = os.open("aileron.yaml", os.O_RDWR)
    m = mmap.mmap(fd, 0)
    m[0:1] = b"x"
    m.flush()
def tmpfile_linkat():
    fd = os.open(".", os.O_TMPFILE | os.O_WRONLY, 0o644)
    os.write(fd, b"version: 1\ndefault: allow\n")
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.linkat(fd, b"", -100, b"tmp-linked.yaml", 0x1000) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    os.rename("tmp-linked.yaml", "aileron.yaml")
def rename_dot_aileron():
    os.rename(".aileron", "moved-aileron")
for name, f in list(globals().items()):
    if callable(f) and getattr(f, "__module__", "") == "__main__" and name != "attempt":
        attempt(name, f)
attempt("control", lambda: open("notes.txt", "w").write("written\n"))
"#;

const SHELL_WRITES: &str = r#"
(exec 3<>aileron.yaml && cat "$W/new.yaml" >&3); echo "fd3=$?"
echo "allow: ['*']" >> aileron.yaml; echo "append=$?"
truncate -s 0 aileron.yaml; echo "truncate=$?"
sed -i 's/touch/nothing/' aileron.yaml; echo "sed_i=$?"
cp "$W/new.yaml" aileron.yaml; echo "cp=$?"
dd if="$W/new.yaml" of=aileron.yaml conv=notrunc status=none; echo "dd=$?"
mv "$W/new.yaml" aileron.yaml; echo "mv=$?"
ln -sf "$W/new.yaml" aileron.yaml; echo "ln=$?"
rm -f aileron.yaml; echo "rm=$?"
"#;

#[test]
fn aileron_yaml_keeps_its_bytes_whatever_writes_it() {
    for enforce in ["files", "all"] {
        let p = Project::new(POLICY);
        std::fs::create_dir_all(p.path(".aileron")).unwrap();
        let w = work(&p);
        std::fs::write(w.join("new.yaml"), PERMISSIVE).unwrap();
        let py = script(&p, "writes.py", WRITES_PY);
        let out = launch(&p, enforce, &[python(), &py, &s(&w.join("new.yaml"))]);
        let results: Vec<&str> = out.stdout.lines().collect();
        assert_eq!(results.len(), 12, "{enforce}: {}", out.show());
        for line in &results {
            let (name, result) = line.split_once(": ").unwrap();
            if name == "control" {
                assert_eq!(result, "ok", "{enforce}: {}", out.show());
            } else {
                assert_ne!(result, "ok", "{enforce}: {name} succeeded\n{}", out.show());
            }
        }
        assert_eq!(p.read("aileron.yaml"), POLICY, "{enforce}: {}", out.show());
        assert_eq!(p.read("notes.txt"), "written\n", "{enforce}");
        assert!(p.path(".aileron").is_dir());

        let out = launch_bash(&p, enforce, SHELL_WRITES);
        for line in out.stdout.lines() {
            assert!(!line.ends_with("=0"), "{enforce}: {line}\n{}", out.show());
        }
        assert_eq!(out.stdout.lines().count(), 9, "{}", out.show());
        assert_eq!(p.read("aileron.yaml"), POLICY, "{enforce}: {}", out.show());
    }
    // Without enforcement the same append changes the policy.
    let p = Project::new(POLICY);
    let out = launch_bash(&p, "none", "echo \"allow: ['*']\" >> aileron.yaml");
    assert_eq!(out.code(), Some(0), "{}", out.show());
    assert_ne!(p.read("aileron.yaml"), POLICY);
}

#[test]
fn aileron_s_other_files_and_secrets_are_locked() {
    let p = Project::new(POLICY);
    let w = work(&p);
    // What exists at launch: the project's log, a git repository, start-up
    // files, and Aileron's data with its database and a token.
    p.write(".aileron/audit.jsonl", "");
    p.write(".git/config", "[core]\n");
    p.write(".git/hooks/README", "hooks\n");
    std::fs::write(p.home.join(".bashrc"), "# rc\n").unwrap();
    let data = p.root.join("data");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(data.join("aileron.db"), "DB-SECRET").unwrap();
    std::fs::write(data.join("api-token"), "TOKEN-SECRET").unwrap();
    let script_text = r#"
        # Shell redirections, not programs: the policy never sees these.
        try() { name=$1; shift; ( eval "$@" ) 2>/dev/null; echo "$name=$?"; }
        try audit 'echo "{}" >> .aileron/audit.jsonl'
        try hook 'echo "touch $W/hooked" > .git/hooks/pre-commit'
        try git_config 'echo "[core] hooksPath = /tmp" >> .git/config'
        try bashrc 'echo "touch $W/rc" >> "$HOME/.bashrc"'
        try data_write 'echo x > "$D/policy.yaml"'
        echo "db=[$(< "$D/aileron.db")]"
        echo "token=[$(< "$D/api-token")]"
        read -r _ _ _ sup _ < /proc/$PPID/stat
        try proc_root 'echo via-proc >> /proc/$sup/root$PWD/aileron.yaml'
        try nsenter 'nsenter -t "$sup" -m sh -c "echo nsenter >> $PWD/aileron.yaml"'
        try nsenter_init 'nsenter -t 1 -m sh -c "echo nsenter >> $PWD/aileron.yaml"'
        # In the box's PID namespace the supervisor has no number (0).
        try kill_supervisor '[ "$sup" -gt 0 ] && kill -KILL "$sup"'
        try control 'echo fine > notes.txt'
    "#;
    let mut cmd = p.aileron(&[
        "launch",
        "--enforce",
        "all",
        "--",
        "bash",
        "-c",
        script_text,
    ]);
    cmd.env("W", &w).env("D", &data).env("AILERON_DATA", &data);
    let out = run_limited(&mut cmd, LIMIT);
    assert_eq!(out.code(), Some(0), "{}", out.show());
    let mut refused = vec![
        "audit",
        "hook",
        "git_config",
        "bashrc",
        "data_write",
        "proc_root",
        "nsenter",
        "nsenter_init",
    ];
    // Signals out of the tree are scoped by Landlock ABI 6 (Linux 6.12).
    if landlock_abi() >= 6 {
        refused.push("kill_supervisor");
    }
    for name in refused {
        let line = out
            .stdout
            .lines()
            .find(|l| l.starts_with(&format!("{name}=")))
            .unwrap_or_else(|| panic!("{name}: {}", out.show()));
        assert_ne!(line, format!("{name}=0"), "{}", out.show());
    }
    assert!(out.stdout.contains("control=0\n"), "{}", out.show());
    assert_eq!(p.read("aileron.yaml"), POLICY, "{}", out.show());
    assert!(out.stdout.contains("db=[]\n"), "{}", out.show());
    assert!(out.stdout.contains("token=[]\n"), "{}", out.show());
    assert_eq!(p.read(".git/config"), "[core]\n");
    assert!(!p.path(".git/hooks/pre-commit").exists());
    assert_eq!(
        std::fs::read_to_string(p.home.join(".bashrc")).unwrap(),
        "# rc\n"
    );
    assert!(!data.join("policy.yaml").exists());
    assert_eq!(p.read("aileron.yaml"), POLICY);
    assert!(
        !p.audit_text().contains("{}\n"),
        "the agent wrote the audit log"
    );
    assert_eq!(p.read("notes.txt"), "fine\n");
}

#[test]
fn the_read_only_mounts_cannot_be_undone() {
    for enforce in ["files", "all"] {
        let p = Project::new(POLICY);
        let out = launch_bash(
            &p,
            enforce,
            r#"
            umount -l aileron.yaml 2>/dev/null; echo "umount=$?"
            unshare -Urm sh -c 'umount -l aileron.yaml' 2>/dev/null; echo "unshare_umount=$?"
            echo '# after umount' >> aileron.yaml 2>/dev/null; echo "write=$?"
            "#,
        );
        assert_eq!(
            p.read("aileron.yaml"),
            POLICY,
            "--enforce {enforce}: the agent unmounted the read-only aileron.yaml and wrote \
             the real one (running as uid {}):\n{}",
            // SAFETY: getuid has no preconditions.
            unsafe { libc::getuid() },
            out.show()
        );
        assert!(out.stdout.contains("write=1\n"), "{}", out.show());
    }
}

#[test]
fn a_policy_written_where_there_was_none_does_not_govern() {
    let p = Project::new(POLICY);
    let w = work(&p);
    let py = script(
        &p,
        "subpolicy.py",
        r#"
import os, subprocess, sys
os.mkdir("sub")
with open("sub/aileron.yaml", "w") as f:
    f.write("version: 1\ndefault: allow\n")
os.chdir("sub")
try:
    print("touch:", subprocess.run(["touch", sys.argv[1]]).returncode)
except OSError as e:
    print("touch: errno", e.errno)
"#,
    );
    let forbidden = s(&w.join("forbidden"));
    let out = launch(&p, "all", &[python(), &py, &forbidden]);
    assert!(
        !Path::new(&forbidden).exists(),
        "a policy the agent wrote in a new subdirectory governed its exec of touch:\n{}\n{}",
        out.show(),
        std::fs::read_to_string(p.path("sub/.aileron/audit.jsonl")).unwrap_or_default()
    );
}

#[test]
fn renaming_the_project_does_not_replace_its_policy() {
    let p = Project::new(POLICY);
    let w = work(&p);
    let py = script(
        &p,
        "rename.py",
        r#"
import os, subprocess, sys
os.chdir("..")
try:
    os.rename("proj", "proj.old")
    print("rename: ok")
except OSError as e:
    print("rename: errno", e.errno)
    sys.exit(0)
os.mkdir("proj")
with open("proj/aileron.yaml", "w") as f:
    f.write("version: 1\ndefault: allow\n")
os.chdir("proj")
try:
    print("touch:", subprocess.run(["touch", sys.argv[1]]).returncode)
except OSError as e:
    print("touch: errno", e.errno)
"#,
    );
    let forbidden = s(&w.join("forbidden"));
    let out = launch(&p, "all", &[python(), &py, &forbidden]);
    assert_eq!(
        p.read("aileron.yaml"),
        POLICY,
        "the project's aileron.yaml was replaced (for every later launch too):\n{}",
        out.show()
    );
    assert!(!Path::new(&forbidden).exists(), "{}", out.show());
}

#[test]
fn the_audit_log_of_a_project_without_one_cannot_be_redirected() {
    // A fresh project: no .aileron yet when the agent starts.
    let p = Project::new(POLICY);
    let w = work(&p);
    let py = script(
        &p,
        "hide.py",
        r#"
import os, subprocess, sys
try:
    os.mkdir(".aileron")
except OSError as e:
    print("mkdir: errno", e.errno)
try:
    os.symlink("/dev/null", ".aileron/audit.jsonl")
except OSError as e:
    print("symlink: errno", e.errno)
try:
    print("touch:", subprocess.run(["touch", sys.argv[1]]).returncode)
except OSError as e:
    print("touch: errno", e.errno)
"#,
    );
    let forbidden = s(&w.join("forbidden"));
    let out = launch(&p, "all", &[python(), &py, &forbidden]);
    assert!(out.stdout.contains("touch: errno 13"), "{}", out.show());
    // The log's directory exists, read-only, before the agent starts.
    assert!(out.stdout.contains("mkdir: errno 17"), "{}", out.show());
    // Read-only (EROFS), or already there (EEXIST: the session's first
    // audit lines were written before the agent started).
    assert!(
        out.stdout.contains("symlink: errno 30") || out.stdout.contains("symlink: errno 17"),
        "{}",
        out.show()
    );
    assert!(!Path::new(&forbidden).exists());
    let log = p.audit_path();
    assert!(
        !log.is_symlink(),
        "the agent made the audit log a link to {:?}: the deny line went there",
        std::fs::read_link(&log).ok()
    );
    assert_denied_by_rule(&p, &format!("touch {forbidden}"));
}

// ---------------------------------------------------------------------------
// 7. Variables that make a program run other code

#[test]
fn ld_preload_does_not_run_its_library() {
    let p = Project::new(POLICY);
    let w = work(&p);
    let attack = compile(&p, "attack", ATTACK_C, &[]);
    let so = p.root.join("bin").join("evil.so");
    std::fs::write(p.root.join("bin/evil.c"), EVIL_SO_C).unwrap();
    let cc = Command::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(&so)
        .arg(p.root.join("bin/evil.c"))
        .output()
        .expect("cc");
    assert!(cc.status.success(), "{}", text(&cc.stderr));
    let preload = format!("LD_PRELOAD={}", so.display());
    let marker = |name: &str| w.join(format!("marker-{name}"));
    let env_marker = |name: &str| format!("MARKER={}", marker(name).display());

    let out = launch(
        &p,
        "all",
        &[
            &attack,
            "-e",
            &preload,
            "-e",
            &env_marker("c"),
            "fork",
            "/usr/bin/ls",
            "ls",
            &s(&w),
        ],
    );
    assert_eq!(out.result("fork"), "errno=13", "{}", out.show());
    assert!(!marker("c").exists(), "the library's constructor ran");
    let rec = supervisor_denials(&p);
    assert!(
        rec.iter().any(|r| r["rule"] == "builtin:env-exec"
            && r["action"]["facets"]["shell"]["line"]
                .as_str()
                .is_some_and(|l| l.starts_with("LD_PRELOAD="))),
        "{}",
        p.audit_text()
    );
    // From a shell, exported.
    let mut cmd = p.aileron(&[
        "launch",
        "--enforce",
        "all",
        "--",
        "bash",
        "-c",
        "export LD_PRELOAD=\"$SO\"; ls >/dev/null; echo \"ls=$?\"",
    ]);
    cmd.env("SO", &so).env("MARKER", marker("bash"));
    let out = run_limited(&mut cmd, LIMIT);
    assert!(out.stdout.contains("ls=126"), "{}", out.show());
    assert!(!marker("bash").exists(), "the library's constructor ran");
    // The same exec without the variable runs.
    let out = launch(
        &p,
        "all",
        &[
            &attack,
            "-e",
            &env_marker("none"),
            "fork",
            "/usr/bin/ls",
            "ls",
            &s(&w),
        ],
    );
    assert_eq!(out.result("fork"), "ran exit=0", "{}", out.show());
    // And without enforcement the library runs: the refusal is the supervisor's.
    let out = launch(
        &p,
        "none",
        &[
            &attack,
            "-e",
            &preload,
            "-e",
            &env_marker("unenforced"),
            "fork",
            "/usr/bin/ls",
            "ls",
            &s(&w),
        ],
    );
    assert_eq!(out.result("fork"), "ran exit=0", "{}", out.show());
    assert!(marker("unenforced").exists());
}

// ---------------------------------------------------------------------------
// The filter's other refusals

#[test]
fn the_tree_cannot_trace_write_memory_mount_or_share_memory() {
    let p = Project::new(POLICY);
    let w = work(&p);
    let probe = compile(&p, "probe", PROBE_C, &[]);
    let mnt = w.join("mnt");
    std::fs::create_dir_all(&mnt).unwrap();
    let forbidden = s(&w.join("int80"));
    let out = launch(&p, "exec", &[&probe, &s(&mnt), &forbidden]);
    let mut expect = vec![
        ("ptrace_attach", "errno=1"),
        ("process_vm_writev", "errno=1"),
        ("io_uring_setup", "errno=1"),
        ("mount", "errno=1"),
        ("umount2", "errno=1"),
        ("open_tree", "errno=1"),
        ("fsopen", "errno=1"),
        ("clone3", "errno=38"),
        ("clone_vm", "errno=1"),
        ("clone_vm_vfork_parent", "errno=1"),
        ("clone_vm_vfork", "ok"),
        ("fork", "ok"),
    ];
    if cfg!(target_arch = "x86_64") {
        expect.push(("int80_execve", "errno=1"));
    }
    for (name, result) in &expect {
        assert_eq!(out.result(name), *result, "{name}\n{}", out.show());
    }
    assert!(!Path::new(&forbidden).exists());
    // Unenforced, the same calls work (mounts left out: they would work as root).
    let out = launch(&p, "none", &[&probe, "-"]);
    for name in ["ptrace_attach", "process_vm_writev", "clone3", "clone_vm"] {
        assert_eq!(out.result(name), "ok", "{name}\n{}", out.show());
    }
}

// ---------------------------------------------------------------------------
// 8. The supervisor dies

#[test]
fn when_the_supervisor_dies_no_survivor_can_exec() {
    let p = Project::new(POLICY);
    let w = work(&p);
    let script_text = r#"
        ( echo > "$W/bg-started"; sleep 1.5; ls / >/dev/null && echo ran > "$W/ran"; echo "rc=$?" > "$W/bg-done" ) &
        echo > "$W/started"
        wait
        echo > "$W/agent-finished"
    "#;
    // Without the box (in it, the survivors die with the session's PID
    // namespace: box_attacks.rs). Left alone, the background child's ls runs.
    let out = launch_bash(&p, "exec", script_text);
    assert_eq!(out.code(), Some(0), "{}", out.show());
    assert!(w.join("ran").exists(), "{}", out.show());
    for f in ["ran", "bg-done", "started", "bg-started", "agent-finished"] {
        std::fs::remove_file(w.join(f)).unwrap();
    }
    // Now the supervisor is killed while the child sleeps.
    let mut cmd = p.aileron(&[
        "launch",
        "--enforce",
        "exec",
        "--",
        "bash",
        "-c",
        script_text,
    ]);
    cmd.env("W", &w)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = no_tty(&mut cmd).spawn().expect("spawn aileron launch");
    let started = wait_for(&w.join("bg-started"), LIMIT) && wait_for(&w.join("started"), LIMIT);
    // SAFETY: kill(2) on our own child, not yet reaped.
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    let status = child.wait().expect("wait");
    assert!(started, "the agent never started");
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(libc::SIGKILL)
    );
    assert!(
        wait_for(&w.join("bg-done"), Duration::from_secs(10)),
        "the background child never finished"
    );
    std::thread::sleep(Duration::from_millis(300));
    let done = std::fs::read_to_string(w.join("bg-done")).unwrap();
    assert!(!w.join("ran").exists(), "ls ran after the supervisor died");
    assert_ne!(done, "rc=0\n");
    assert!(
        !w.join("agent-finished").exists(),
        "the agent outlived the supervisor"
    );
}

// ---------------------------------------------------------------------------
// 9. --enforce's values

#[test]
fn enforce_none_says_so_and_an_unknown_value_is_refused() {
    let p = Project::new(POLICY);
    let w = work(&p);
    let out = launch_bash(&p, "none", "touch \"$W/none\"");
    assert_eq!(out.code(), Some(0), "{}", out.show());
    assert!(
        out.stderr.contains(
            "aileron: --enforce none: programs the agent's commands start are not decided"
        ),
        "{}",
        out.show()
    );
    assert!(w.join("none").exists());

    let out = launch_bash(&p, "bogus", "touch \"$W/bogus\"");
    assert_ne!(out.code(), Some(0), "{}", out.show());
    assert!(
        out.stderr.contains("unknown value `bogus`") && out.stderr.contains("not launching"),
        "{}",
        out.show()
    );
    assert!(!w.join("bogus").exists());
}

// ---------------------------------------------------------------------------
// 10. Ordinary work

#[test]
fn ordinary_work_runs_under_enforcement() {
    let p = Project::new("version: 1\ndefault: allow\n");
    let w = work(&p);
    std::fs::write(
        w.join("hello.py"),
        "import subprocess\nprint('py', 1, flush=True)\nsubprocess.run(['echo', 'py-child'])\n",
    )
    .unwrap();
    std::fs::write(
        w.join("hello.c"),
        "#include <stdio.h>\nint main(void) { puts(\"c hello\"); return 0; }\n",
    )
    .unwrap();
    let script_text = r#"
        set -e
        ls "$W" >/dev/null
        git --version | cut -d' ' -f1-2
        python3 "$W/hello.py"
        cc -o "$W/hello" "$W/hello.c" && "$W/hello"
        printf 'b\na\n' | sort | head -n 1
        $SHELL -c 'echo via-shim'
        git init -q "$W/repo"
        git -C "$W/repo" -c user.email=a@b.c -c user.name=n commit -q --allow-empty -m first
        git -C "$W/repo" log --oneline | wc -l
        echo done
    "#;
    let out = launch_bash(&p, "all", script_text);
    assert_eq!(out.code(), Some(0), "{}", out.show());
    assert_eq!(
        out.stdout,
        "git version\npy 1\npy-child\nc hello\na\nvia-shim\n1\ndone\n",
        "{}",
        out.show()
    );
    let denials = supervisor_denials(&p);
    assert!(denials.is_empty(), "{denials:#?}");
    assert!(
        p.audit().iter().any(|r| r["adapter"] == "supervisor"),
        "the supervisor decided nothing:\n{}",
        p.audit_text()
    );
}

/// The real agents are `#!/usr/bin/env node` scripts: the interpreter the
/// launched script names is the launch itself (not a command of the
/// agent's to ask about), while what the script runs is still decided.
#[test]
fn a_launched_script_starts_through_its_interpreter_and_what_it_runs_is_decided() {
    let p = Project::new("version: 1\ndefault: ask\n");
    let w = work(&p);
    let forbidden = s(&w.join("made-by-the-script"));
    let script = w.join("agent");
    std::fs::write(
        &script,
        format!("#!/usr/bin/env bash\necho started\n/usr/bin/touch {forbidden}\necho touch=$?\n"),
    )
    .expect("script");
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    let out = launch(&p, "all", &[&s(&script)]);
    assert!(out.stdout.contains("started"), "{}", out.show());
    assert!(out.stdout.contains("touch=126"), "{}", out.show());
    assert!(!Path::new(&forbidden).exists(), "{}", out.show());
}

/// Agents that exec a shell themselves (Codex CLI runs `bash -lc CMD`
/// with no `$SHELL`) are decided by the shell's text, as the shim decides
/// it: the command a rule allows runs, another is refused, and a shell
/// option that runs a file of its own choosing keeps the whole exec
/// decided as written.
#[test]
fn a_shell_an_agent_execs_is_decided_by_its_command() {
    let p = Project::new("version: 1\ndefault: ask\nallow: [\"touch *allowed-*\"]\n");
    let w = work(&p);
    let attack = compile(&p, "attack", ATTACK_C, &[]);
    let allowed = s(&w.join("allowed-1"));
    let other = s(&w.join("other-1"));
    let rc = s(&w.join("rc"));
    std::fs::write(&rc, format!("touch {other}.rc\n")).expect("rc file");
    for (line, shell_args) in [
        (format!("touch {allowed}"), vec!["-lc"]),
        (format!("touch {other}"), vec!["-lc"]),
        (format!("touch {allowed}.rc"), vec!["--rcfile", &rc, "-ic"]),
    ] {
        let mut argv = vec![attack.as_str(), "direct", "/bin/bash", "bash"];
        argv.extend(shell_args.iter().copied());
        argv.push(&line);
        let out = launch(&p, "all", &argv);
        assert!(!out.timed_out, "{}", out.show());
    }
    assert!(
        Path::new(&allowed).exists(),
        "the allowed command did not run"
    );
    assert!(!Path::new(&other).exists(), "a command no rule allows ran");
    assert!(
        !Path::new(&format!("{other}.rc")).exists()
            && !Path::new(&format!("{allowed}.rc")).exists(),
        "a shell with --rcfile ran"
    );
}

/// `aileron gate` is trusted only as the DEBUG trap of the interactive
/// bash `aileron launch` started: an agent that runs it itself gets no
/// context under which the programs it starts next pass as part of an
/// allowed line.
#[test]
fn an_agent_running_aileron_gate_itself_gains_no_allowed_context() {
    let p = Project::new("version: 1\ndefault: ask\nallow: [\"echo *\"]\n");
    let w = work(&p);
    let made = w.join("made");
    let aileron = std::fs::canonicalize(support::AILERON).unwrap();
    let agent = script(
        &p,
        "agent.py",
        &format!(
            "import subprocess\n\
             try:\n    g = subprocess.run([{aileron:?}, 'gate', '--', 'echo hi']).returncode\n\
             except PermissionError:\n    g = 'refused'\n\
             print('gate: %s' % g, flush=True)\n\
             try:\n    m = subprocess.run(['/usr/bin/mkdir', {made:?}]).returncode\n\
             except PermissionError:\n    m = 'refused'\n\
             print('mkdir: %s' % m, flush=True)\n",
            aileron = s(&aileron),
            made = s(&made),
        ),
    );
    let out = launch(&p, "exec", &[python(), &agent]);
    assert!(!made.exists(), "{}", out.show());
    assert_eq!(out.result("mkdir"), "refused", "{}", out.show());
}
