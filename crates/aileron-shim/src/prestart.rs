//! The shim's path through a launch session, taken from the program's entry
//! point before the C library has started.
//!
//! Under `aileron launch` the session decides every line, so all the shim
//! has to do is send its arguments and working directory and exec what the
//! session answers. Starting glibc costs more than that here (its CPU
//! feature probe traps to the hypervisor on a VM, dozens of times), and bash
//! pays it again. So `aileron-sh`'s entry point calls [`run`] first: it does
//! the round trip with raw system calls and execs the real shell or refuses.
//! Whatever it does not handle (no session, a form other than `-c`,
//! arguments that are not UTF-8, a locale other than C, POSIX or UTF-8,
//! any failure before the session has the whole request) returns, and the C library and `main` start as before;
//! `main` then asks the session in JSON, or decides on its own. Once the
//! session has the request it may have decided, recorded and prompted, so
//! a missing or unreadable answer is then a refusal, never a second ask.
//!
//! What reaches bash is what the shim was given (its environment, its
//! open descriptors, closed ones staying closed, and its signal
//! dispositions, as if the agent had run bash itself), less what would run
//! code that was not decided: the session answers with the arguments to
//! exec (no login or interactive mode, start-up files off), and the
//! variables bash would run as code are taken out of the environment
//! (`aileron_shell::invocation::runs_as_code`) just before the exec.
//!
//! The wire format is [`aileron_session::ShimCall`]; the tests below check
//! this side against that one.
//!
//! # Rules for this code
//! It runs before the C library is set up, so it must not call into libc.
//! That includes `memcpy`, `memset`, `memcmp` and `strlen`, which the
//! compiler may emit for copies, zeroed arrays, slice comparisons or a
//! byte loop, and which static glibc resolves only during its start-up. So:
//! - no allocation, no thread-locals, no formatting, nothing that panics
//!   (slices are read with `get`, arithmetic is checked);
//! - buffers are statics, and bytes are read and written with volatile
//!   accesses, which the optimizer cannot merge into a library call;
//! - system calls are made with inline assembly;
//! - no closure that captures more than 32 bytes, and no value of that
//!   size moved: unoptimized builds copy those with `memcpy`.
//!
//! `tests/shim.rs::the_early_path_never_calls_into_the_c_library` walks
//! the binary's machine code from the entry point and fails on any of it.

use aileron_session::{ShimCall, ShimReply};
use aileron_shell::invocation::{FUNCTION_PREFIX, STRIPPED_VARIABLES};
use aileron_shell::locale::CTYPE_VARIABLES;

/// Room for the request: the header, working directory and arguments.
/// A larger request is left to the full shim.
const REQUEST_CAP: usize = 256 * 1024;
/// Room for the reply: the real shell's path and the arguments to exec it
/// with (the request's, a few options more), or a message.
const REPLY_CAP: usize = REQUEST_CAP + 16 * 1024;
/// Room for the real shell's `argv` pointers; more arguments are left to
/// the full shim.
const ARGV_CAP: usize = 16 * 1024;
/// Arguments the session may add to the shim's (`--noprofile --norc`), with
/// the NULL that ends `argv`.
const ARGV_SPARE: usize = 8;
/// The exit status of a command that was not allowed to run.
const EXIT_DENIED: usize = 126;

/// Runs the command's whole decision through the launch session, if there
/// is one, and never returns then: it execs the real shell or exits 126.
/// Returns when the normal start must take over.
///
/// # Safety
/// `stack` is the initial process stack as the kernel laid it out (`argc`,
/// the `argv` pointers and a NULL, the `envp` pointers and a NULL). Only
/// from the entry point, once, before anything else runs.
pub unsafe extern "C" fn run(stack: *mut usize) {
    // SAFETY: the caller's contract; each step below says what it relies on.
    unsafe {
        let argc = *stack;
        // Without even argv[0] (possible before Linux 5.18), the full shim.
        if argc == 0 {
            return;
        }
        let argv = stack.add(1).cast::<*const u8>();
        let envp_mut = argv.add(argc.saturating_add(1));
        let envp = envp_mut.cast_const();
        let Some(socket) = env_value(envp, b"AILERON_SOCKET") else {
            return;
        };
        if argc.saturating_add(ARGV_SPARE) > ARGV_CAP {
            return;
        }
        if !plain_locale(envp) {
            return;
        }
        let request = &mut *core::ptr::addr_of_mut!(REQUEST);
        let reply = &mut *core::ptr::addr_of_mut!(REPLY);
        let Some(len) = write_request(request, argc, argv.cast_const()) else {
            return;
        };
        let Some(request) = request.get(..len) else {
            return;
        };
        let answer = match ask(socket, request, reply) {
            // Nothing was decided: the full shim asks (or decides) itself.
            Asked::NotDelivered => return,
            // Asking again could decide, record and prompt a second time.
            Asked::NoAnswer => refuse(&[b"aileron: denied: the launch session did not answer"]),
            Asked::Answered(got) => reply.get(..got).unwrap_or_default(),
        };
        match parse_reply(answer) {
            Reply::Exec {
                shell,
                argv: first,
                count,
            } => {
                let exec_argv = &mut *core::ptr::addr_of_mut!(ARGV);
                if !fill_argv(exec_argv, first, count) {
                    refuse(&[b"aileron: denied: the launch session's answer cannot be read"]);
                }
                // Nothing returns from here: the kernel's environment array
                // (which the C library would read on) is ours to change.
                strip_environment(envp_mut);
                let err = sys::execve(shell, exec_argv.as_ptr(), envp);
                let digits = &mut *core::ptr::addr_of_mut!(DIGITS);
                let n = put_decimal(digits, 0, err.unsigned_abs()).unwrap_or(0);
                refuse(&[
                    b"aileron: denied: cannot run the shell ",
                    c_bytes(shell),
                    b": error ",
                    digits.get(..n).unwrap_or_default(),
                ]);
            }
            Reply::Refuse(message) => refuse(&[message]),
            Reply::FullShim => {}
            Reply::Unreadable => {
                refuse(&[b"aileron: denied: the launch session's answer cannot be read"])
            }
        }
    }
}

/// Prints `parts` and a newline on stderr, and exits 126.
fn refuse(parts: &[&[u8]]) -> ! {
    for part in parts {
        write_all(2, part);
    }
    write_all(2, b"\n");
    sys::exit(EXIT_DENIED)
}

// Statics, not locals: an array on the stack would be zeroed by a call to
// `memset` in unoptimized builds.
static mut REQUEST: [u8; REQUEST_CAP] = [0; REQUEST_CAP];
static mut REPLY: [u8; REPLY_CAP] = [0; REPLY_CAP];
static mut ADDRESS: SockaddrUn = SockaddrUn {
    family: AF_UNIX,
    path: [0; 108],
};
static mut DIGITS: [u8; 20] = [0; 20];
static mut ARGV: [*const u8; ARGV_CAP] = [core::ptr::null(); ARGV_CAP];

/// How asking the session went.
enum Asked {
    /// The request did not reach the session whole: nothing was decided.
    NotDelivered,
    /// The session had the whole request but no answer came back.
    NoAnswer,
    /// The answer's length in the reply buffer (cut at its end if longer).
    Answered(usize),
}

/// The session's answer, pointing into the reply buffer. At most 32
/// bytes, so that an unoptimized build moves it without `memcpy`.
#[derive(Debug, PartialEq, Eq)]
enum Reply<'a> {
    /// The NUL-terminated path of the real shell, and the first of `count`
    /// NUL-terminated arguments (`argv[0]` first) that follow each other
    /// to the end of the reply.
    Exec {
        shell: *const u8,
        argv: *const u8,
        count: usize,
    },
    Refuse(&'a [u8]),
    /// `f`, or `{`: a session that speaks only JSON, and did not decide.
    FullShim,
    /// Empty, cut short or unknown.
    Unreadable,
}

/// Reads a reply as `ShimReply::encode` writes it.
fn parse_reply(reply: &[u8]) -> Reply<'_> {
    match load(reply, 0) {
        Some(ShimReply::EXEC) => {
            let Some((count, shell)) = read_count(reply, 1) else {
                return Reply::Unreadable;
            };
            let Some(end) = find_nul(reply, shell) else {
                return Reply::Unreadable;
            };
            // Exactly `count` fields, each ended by a NUL, up to the end:
            // a reply cut short is not another command line.
            let first = end + 1;
            let mut at = first;
            let mut fields = 0;
            while at < reply.len() {
                let Some(nul) = find_nul(reply, at) else {
                    return Reply::Unreadable;
                };
                fields += 1;
                at = nul + 1;
            }
            if end == shell || count == 0 || fields != count {
                return Reply::Unreadable;
            }
            Reply::Exec {
                shell: reply.as_ptr().wrapping_add(shell),
                argv: reply.as_ptr().wrapping_add(first),
                count,
            }
        }
        // A message longer than the buffer is printed as far as it goes.
        Some(ShimReply::REFUSE) => Reply::Refuse(reply.get(1..).unwrap_or_default()),
        Some(ShimReply::FULL_SHIM | b'{') => Reply::FullShim,
        _ => Reply::Unreadable,
    }
}

/// A decimal number at `at` ended by a newline, and the index after it.
fn read_count(bytes: &[u8], at: usize) -> Option<(usize, usize)> {
    let mut n: usize = 0;
    let mut i = at;
    loop {
        match load(bytes, i)? {
            b'\n' if i > at => return Some((n, i + 1)),
            d @ b'0'..=b'9' => {
                n = n.checked_mul(10)?.checked_add(usize::from(d - b'0'))?;
            }
            _ => return None,
        }
        i += 1;
    }
}

/// Points `out` at the `count` NUL-terminated strings that follow each
/// other from `first`, then a NULL. `false` when they do not fit.
///
/// # Safety
/// `first` starts `count` NUL-terminated strings laid end to end, which
/// outlive the exec.
unsafe fn fill_argv(out: &mut [*const u8], first: *const u8, count: usize) -> bool {
    if count >= out.len() {
        return false;
    }
    let mut at = first;
    let mut i = 0;
    while i < count {
        let Some(slot) = out.get_mut(i) else {
            return false;
        };
        // SAFETY: a live element of the slice.
        unsafe { core::ptr::write_volatile(slot, at) };
        // SAFETY: the caller's contract: a NUL-terminated string at `at`,
        // and the next one after its NUL.
        at = unsafe { at.add(c_bytes(at).len() + 1) };
        i += 1;
    }
    match out.get_mut(count) {
        // SAFETY: as above.
        Some(slot) => unsafe { core::ptr::write_volatile(slot, core::ptr::null()) },
        None => return false,
    }
    true
}

/// Takes the variables the real shell would run as code out of the
/// environment array, in place, keeping the others in order.
///
/// # Safety
/// `envp` is a writable NULL-terminated array of NUL-terminated strings,
/// and nothing reads past its new end afterwards (the C library would
/// look for the auxiliary vector there: only before an exec).
unsafe fn strip_environment(envp: *mut *const u8) {
    let mut read = 0;
    let mut kept = 0;
    loop {
        // SAFETY: the caller's contract; the NULL entry ends the loop, and
        // `kept` never passes `read`.
        unsafe {
            let entry = core::ptr::read_volatile(envp.add(read));
            if entry.is_null() {
                break;
            }
            if !runs_as_code(c_bytes(entry)) {
                core::ptr::write_volatile(envp.add(kept), entry);
                kept += 1;
            }
        }
        read += 1;
    }
    // SAFETY: `kept` is at most the index of the NULL entry.
    unsafe { core::ptr::write_volatile(envp.add(kept), core::ptr::null()) };
}

/// Whether the environment entry `NAME=value` is one the shim takes out.
fn runs_as_code(entry: &[u8]) -> bool {
    let mut eq = 0;
    while eq < entry.len() && load(entry, eq) != Some(b'=') {
        eq += 1;
    }
    let name = entry.get(..eq).unwrap_or_default();
    let prefix = FUNCTION_PREFIX.as_bytes();
    if same(name.get(..prefix.len()).unwrap_or_default(), prefix) {
        return true;
    }
    for variable in &STRIPPED_VARIABLES {
        if same(name, variable.as_bytes()) {
            return true;
        }
    }
    false
}

/// Writes the request into `buf`: header, working directory, then `argv`,
/// each field ended by a NUL. `None` when it does not fit or the working
/// directory cannot be read.
///
/// # Safety
/// `argv` holds `argc` pointers to NUL-terminated strings.
unsafe fn write_request(buf: &mut [u8], argc: usize, argv: *const *const u8) -> Option<usize> {
    let mut len = put(buf, 0, ShimCall::MAGIC)?;
    len = put_decimal(buf, len, argc)?;
    len = put(buf, len, b"\n")?;
    let rest = buf.get_mut(len..)?;
    // The kernel writes the path and its NUL; a directory that is gone or
    // outside this root reads as an error or a path not starting with `/`.
    let cwd = sys::getcwd(rest.as_mut_ptr(), rest.len());
    if cwd <= 1 || load(rest, 0) != Some(b'/') {
        return None;
    }
    len += cwd as usize;
    for i in 0..argc {
        // SAFETY: the caller's contract.
        let arg = unsafe { c_bytes(*argv.add(i)) };
        len = put(buf, len, arg)?;
        len = put(buf, len, b"\0")?;
    }
    Some(len)
}

/// Connects to the session at `socket` (NUL-terminated), sends `request`
/// and reads the reply into `reply`.
fn ask(socket: *const u8, request: &[u8], reply: &mut [u8]) -> Asked {
    // SAFETY: `socket` comes from the environment block and is NUL-terminated.
    let path = unsafe { c_bytes(socket) };
    // SAFETY: only this single-threaded code touches the static.
    let address = unsafe { &mut *core::ptr::addr_of_mut!(ADDRESS) };
    if path.is_empty() || path.len() >= address.path.len() {
        return Asked::NotDelivered;
    }
    if put(&mut address.path, 0, path).is_none() {
        return Asked::NotDelivered;
    }
    store(&mut address.path, path.len(), 0);
    let fd = sys::socket(AF_UNIX.into(), SOCK_STREAM | SOCK_CLOEXEC, 0);
    if fd < 0 {
        return Asked::NotDelivered;
    }
    let fd = fd as usize;
    let asked = exchange(fd, address, 2 + path.len(), request, reply);
    sys::close(fd);
    asked
}

fn exchange(
    fd: usize,
    address: &SockaddrUn,
    address_len: usize,
    request: &[u8],
    reply: &mut [u8],
) -> Asked {
    if sys::connect(fd, address, address_len) != 0 {
        return Asked::NotDelivered;
    }
    let mut sent = 0;
    while let Some(rest) = request.get(sent..).filter(|r| !r.is_empty()) {
        let n = sys::send(fd, rest);
        if n == -EINTR {
            continue;
        }
        if n <= 0 {
            // The session reads a request cut short as malformed.
            return Asked::NotDelivered;
        }
        sent += n as usize;
    }
    if sys::shutdown(fd, SHUT_WR) != 0 {
        return Asked::NotDelivered;
    }
    let mut got = 0;
    loop {
        let Some(rest) = reply.get_mut(got..).filter(|r| !r.is_empty()) else {
            return Asked::Answered(got);
        };
        let n = sys::read(fd, rest);
        if n == -EINTR {
            continue;
        }
        if n < 0 || (n == 0 && got == 0) {
            return Asked::NoAnswer;
        }
        if n == 0 {
            return Asked::Answered(got);
        }
        got += n as usize;
    }
}

/// The value of the environment variable `name`, if it is set and not
/// empty, as a NUL-terminated string.
///
/// # Safety
/// `envp` is a NULL-terminated array of NUL-terminated strings.
unsafe fn env_value(envp: *const *const u8, name: &[u8]) -> Option<*const u8> {
    let mut i = 0;
    loop {
        // SAFETY: the caller's contract; the NULL entry ends the loop.
        let entry = unsafe { *envp.add(i) };
        if entry.is_null() {
            return None;
        }
        // SAFETY: `entry` is NUL-terminated, so the first mismatch (at
        // the latest its NUL) stops the comparison inside it; after a
        // whole match, the byte after the name is inside it too.
        let matches = name
            .iter()
            .enumerate()
            .all(|(j, &b)| unsafe { core::ptr::read_volatile(entry.add(j)) } == b)
            && unsafe { core::ptr::read_volatile(entry.add(name.len())) } == b'=';
        if matches {
            // SAFETY: `NAME=` matched, so the value (at least its NUL) follows.
            let value = unsafe { entry.add(name.len() + 1) };
            // SAFETY: as above; an empty value is its NUL.
            return (unsafe { core::ptr::read_volatile(value) } != 0).then_some(value);
        }
        i += 1;
    }
}

/// Whether the environment's character set is one bash reads as the
/// analysis does, at a glance: no `LOCPATH`, and the first of `LC_ALL`,
/// `LC_CTYPE` and `LANG` that is set is `C`, `POSIX` or a UTF-8 locale.
/// Anything else goes to the full shim, which looks closer
/// (`aileron_shell::locale`).
///
/// # Safety
/// `envp` is a NULL-terminated array of NUL-terminated strings.
unsafe fn plain_locale(envp: *const *const u8) -> bool {
    // SAFETY: the caller's contract, for each lookup.
    unsafe {
        if env_value(envp, b"LOCPATH").is_some() {
            return false;
        }
        for variable in &CTYPE_VARIABLES {
            if let Some(value) = env_value(envp, variable.as_bytes()) {
                let value = c_bytes(value);
                return same(value, b"C")
                    || same(value, b"POSIX")
                    || contains_lowercased(value, b"utf-8")
                    || contains_lowercased(value, b"utf8");
            }
        }
        true
    }
}

// Plain loops: in an unoptimized build, a closure that captures more than
// 32 bytes is copied with `memcpy`.
fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if load(a, i) != load(b, i) {
            return false;
        }
        i += 1;
    }
    true
}

/// Whether `hay`, lowercased, contains `needle` (lowercase).
fn contains_lowercased(hay: &[u8], needle: &[u8]) -> bool {
    let Some(last) = hay.len().checked_sub(needle.len()) else {
        return false;
    };
    let mut at = 0;
    while at <= last {
        let mut j = 0;
        while j < needle.len()
            && load(hay, at + j).map(|b| b.to_ascii_lowercase()) == load(needle, j)
        {
            j += 1;
        }
        if j == needle.len() {
            return true;
        }
        at += 1;
    }
    false
}

/// The bytes of a NUL-terminated string, without the NUL.
///
/// # Safety
/// `s` points to a NUL-terminated string that outlives the slice.
unsafe fn c_bytes<'a>(s: *const u8) -> &'a [u8] {
    let mut n = 0;
    // SAFETY: the caller's contract; the loop stops at the NUL.
    while unsafe { core::ptr::read_volatile(s.add(n)) } != 0 {
        n += 1;
    }
    // SAFETY: the `n` bytes before the NUL.
    unsafe { core::slice::from_raw_parts(s, n) }
}

/// Copies `bytes` into `buf` at `at`; the new length, or `None` when it
/// does not fit.
fn put(buf: &mut [u8], at: usize, bytes: &[u8]) -> Option<usize> {
    let end = at.checked_add(bytes.len())?;
    if end > buf.len() {
        return None;
    }
    for (i, &b) in bytes.iter().enumerate() {
        store(buf, at + i, load(bytes, i).unwrap_or(b));
    }
    Some(end)
}

fn find_nul(bytes: &[u8], from: usize) -> Option<usize> {
    (from..bytes.len()).find(|&i| load(bytes, i) == Some(0))
}

/// Writes `n` in decimal into `buf` at `at`; the new length, or `None`
/// when it does not fit.
fn put_decimal(buf: &mut [u8], at: usize, n: usize) -> Option<usize> {
    let mut width = 1;
    let mut rest = n / 10;
    while rest > 0 {
        width += 1;
        rest /= 10;
    }
    let end = at.checked_add(width)?;
    if end > buf.len() {
        return None;
    }
    let mut rest = n;
    for i in (at..end).rev() {
        store(buf, i, b'0' + (rest % 10) as u8);
        rest /= 10;
    }
    Some(end)
}

fn load(bytes: &[u8], i: usize) -> Option<u8> {
    // SAFETY: a reference to an element of a live slice.
    bytes.get(i).map(|b| unsafe { core::ptr::read_volatile(b) })
}

fn store(bytes: &mut [u8], i: usize, value: u8) {
    if let Some(b) = bytes.get_mut(i) {
        // SAFETY: a reference to an element of a live slice.
        unsafe { core::ptr::write_volatile(b, value) }
    }
}

fn write_all(fd: usize, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        let n = sys::write(fd, bytes);
        if n == -EINTR {
            continue;
        }
        if n <= 0 {
            return;
        }
        bytes = bytes.get(n as usize..).unwrap_or_default();
    }
}

const AF_UNIX: u16 = 1;
const SOCK_STREAM: usize = 1;
const SOCK_CLOEXEC: usize = 0o2000000;
const SHUT_WR: usize = 1;
const EINTR: isize = 4;

#[repr(C)]
struct SockaddrUn {
    family: u16,
    path: [u8; 108],
}

/// Linux system calls, made directly. Each returns the kernel's result:
/// a value, or `-errno`.
mod sys {
    use super::SockaddrUn;
    use core::arch::asm;

    /// # Safety
    /// The arguments are valid for system call `nr`.
    unsafe fn call(nr: usize, a0: usize, a1: usize, a2: usize, a3: usize) -> isize {
        let ret: isize;
        // SAFETY: the caller's contract; `syscall` clobbers rcx and r11.
        unsafe {
            asm!(
                "syscall",
                inlateout("rax") nr as isize => ret,
                in("rdi") a0,
                in("rsi") a1,
                in("rdx") a2,
                in("r10") a3,
                // Unused arguments are zero (`sendto`'s address and its length).
                in("r8") 0usize,
                in("r9") 0usize,
                lateout("rcx") _,
                lateout("r11") _,
                options(nostack),
            );
        }
        ret
    }

    pub fn read(fd: usize, buf: &mut [u8]) -> isize {
        // SAFETY: a writable buffer of this length.
        unsafe { call(0, fd, buf.as_mut_ptr() as usize, buf.len(), 0) }
    }

    pub fn write(fd: usize, buf: &[u8]) -> isize {
        // SAFETY: a readable buffer of this length.
        unsafe { call(1, fd, buf.as_ptr() as usize, buf.len(), 0) }
    }

    pub fn close(fd: usize) {
        // SAFETY: no memory is passed.
        unsafe { call(3, fd, 0, 0, 0) };
    }

    pub fn socket(domain: usize, kind: usize, protocol: usize) -> isize {
        // SAFETY: no memory is passed.
        unsafe { call(41, domain, kind, protocol, 0) }
    }

    pub fn connect(fd: usize, address: &SockaddrUn, len: usize) -> isize {
        // SAFETY: `len` is at most the size of `address`.
        unsafe {
            call(
                42,
                fd,
                address as *const SockaddrUn as usize,
                len.min(110),
                0,
            )
        }
    }

    /// `sendto` with `MSG_NOSIGNAL`: a session that went away is an error,
    /// not death by SIGPIPE.
    pub fn send(fd: usize, buf: &[u8]) -> isize {
        const MSG_NOSIGNAL: usize = 0x4000;
        // SAFETY: a readable buffer of this length; no address.
        unsafe { call(44, fd, buf.as_ptr() as usize, buf.len(), MSG_NOSIGNAL) }
    }

    pub fn shutdown(fd: usize, how: usize) -> isize {
        // SAFETY: no memory is passed.
        unsafe { call(48, fd, how, 0, 0) }
    }

    pub fn getcwd(buf: *mut u8, len: usize) -> isize {
        // SAFETY: the caller passes a writable buffer of this length.
        unsafe { call(79, buf as usize, len, 0, 0) }
    }

    /// Returns only on failure, with `-errno`.
    ///
    /// # Safety
    /// NUL-terminated `path`; NULL-terminated arrays of NUL-terminated strings.
    pub unsafe fn execve(path: *const u8, argv: *const *const u8, envp: *const *const u8) -> isize {
        // SAFETY: the caller's contract.
        unsafe { call(59, path as usize, argv as usize, envp as usize, 0) }
    }

    pub fn exit(code: usize) -> ! {
        // SAFETY: `exit_group` takes no memory and does not return.
        unsafe { asm!("syscall", in("rax") 231, in("rdi") code, options(noreturn, nostack)) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CString;

    #[test]
    fn the_request_is_what_the_session_reads() {
        let args = ["-bash", "-lc", "", "ls 'a b' | wc -l"].map(|a| CString::new(a).unwrap());
        let ptrs: Vec<*const u8> = args.iter().map(|a| a.as_ptr().cast()).collect();
        let mut buf = vec![0u8; 4096];
        // SAFETY: `ptrs` holds pointers to live NUL-terminated strings.
        let len = unsafe { write_request(&mut buf, ptrs.len(), ptrs.as_ptr()) }.unwrap();
        let call = ShimCall::decode(&buf[..len]).unwrap();
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(call.cwd, cwd.to_str().unwrap());
        assert_eq!(call.arg0, "-bash");
        assert_eq!(call.args, ["-lc", "", "ls 'a b' | wc -l"]);
    }

    #[test]
    fn a_request_that_does_not_fit_is_left_to_the_full_shim() {
        let arg = CString::new("x".repeat(200)).unwrap();
        let ptrs = [arg.as_ptr().cast::<u8>()];
        let mut buf = vec![0u8; 150];
        // SAFETY: as above.
        assert_eq!(unsafe { write_request(&mut buf, 1, ptrs.as_ptr()) }, None);
    }

    #[test]
    fn replies_are_read_as_the_session_writes_them() {
        let bytes = ShimReply::Exec {
            shell: "/bin/bash".into(),
            argv: ["/bin/bash", "--norc", "-c", "", "ls"]
                .map(String::from)
                .to_vec(),
        }
        .encode();
        let Reply::Exec { shell, argv, count } = parse_reply(&bytes) else {
            panic!("not an exec");
        };
        assert_eq!(count, 5);
        let mut out = [core::ptr::null(); 8];
        // SAFETY: the pointers point to NUL-terminated fields inside `bytes`.
        unsafe {
            assert_eq!(c_bytes(shell), b"/bin/bash");
            assert!(fill_argv(&mut out, argv, count));
            let args: Vec<&[u8]> = out[..count].iter().map(|&a| c_bytes(a)).collect();
            assert_eq!(args, [&b"/bin/bash"[..], b"--norc", b"-c", b"", b"ls"]);
            assert!(out[count].is_null());
            assert!(
                !fill_argv(&mut out[..5], argv, count),
                "no room for the NULL"
            );
        }
        let refuse = ShimReply::Refuse("aileron: denied: no (r1)".into()).encode();
        assert_eq!(
            parse_reply(&refuse),
            Reply::Refuse(b"aileron: denied: no (r1)")
        );
        assert_eq!(parse_reply(&ShimReply::FullShim.encode()), Reply::FullShim);
        // A session that speaks only JSON refuses the raw request without
        // deciding it: the full shim asks again.
        assert_eq!(parse_reply(b"{\"allow\":false}\n"), Reply::FullShim);
    }

    #[test]
    fn a_reply_cut_short_or_unknown_cannot_be_read() {
        for bytes in [
            &b""[..],
            b"x/bin/bash",
            b"x/bin/bash\0-bash\0",
            b"x1\n/bin/bash\0",
            b"x2\n/bin/bash\0bash\0",
            b"x2\n/bin/bash\0bash\0-c",
            b"x1\n/bin/bash\0bash\0-c\0",
            b"x1\n\0bash\0",
            b"x\n/bin/bash\0bash\0",
            b"x0\n/bin/bash\0",
            b"x99999999999999999999999\n/bin/bash\0bash\0",
            b"?",
        ] {
            assert_eq!(parse_reply(bytes), Reply::Unreadable, "{bytes:?}");
        }
    }

    #[test]
    fn the_socket_path_is_found_in_the_environment() {
        let env = [
            "PATH=/bin",
            "AILERON_SOCKETX=/no",
            "AILERON_SOCKET=/run/s.sock",
        ]
        .map(|a| CString::new(a).unwrap());
        let mut ptrs: Vec<*const u8> = env.iter().map(|a| a.as_ptr().cast()).collect();
        ptrs.push(std::ptr::null());
        // SAFETY: a NULL-terminated array of live strings.
        let value = unsafe { env_value(ptrs.as_ptr(), b"AILERON_SOCKET") }.unwrap();
        // SAFETY: points into a live NUL-terminated string.
        assert_eq!(unsafe { c_bytes(value) }, b"/run/s.sock");
        let empty = [CString::new("AILERON_SOCKET=").unwrap()];
        let ptrs = [empty[0].as_ptr().cast::<u8>(), std::ptr::null()];
        // SAFETY: as above.
        assert_eq!(unsafe { env_value(ptrs.as_ptr(), b"AILERON_SOCKET") }, None);
    }

    #[test]
    fn only_a_plain_locale_stays_on_the_early_path() {
        let plain = |vars: &[&str]| {
            let env: Vec<CString> = vars.iter().map(|v| CString::new(*v).unwrap()).collect();
            let mut ptrs: Vec<*const u8> = env.iter().map(|a| a.as_ptr().cast()).collect();
            ptrs.push(std::ptr::null());
            // SAFETY: a NULL-terminated array of live strings.
            unsafe { plain_locale(ptrs.as_ptr()) }
        };
        assert!(plain(&[]));
        assert!(plain(&["LANG=C.UTF-8"]));
        assert!(plain(&["LANG=en_US.utf8"]));
        assert!(plain(&["LC_ALL=C", "LANG=zh_CN.GBK"]));
        assert!(plain(&["LC_ALL=", "LANG=POSIX"]));
        assert!(!plain(&["LANG=zh_CN.GBK"]));
        assert!(!plain(&["LC_CTYPE=zh_TW", "LANG=en_US.UTF-8"]));
        assert!(
            !plain(&["LANG=en_US"]),
            "not UTF-8: the full shim looks closer"
        );
        assert!(!plain(&["LANG=C.UTF-8", "LOCPATH=/tmp/loc"]));
    }

    #[test]
    fn variables_that_run_as_code_are_taken_out_of_the_environment() {
        let env = [
            "PATH=/bin",
            "BASH_ENV=/tmp/evil",
            "BASH_FUNC_git%%=() { touch x; }",
            "HOME=/h",
            "SHELLOPTS=xtrace",
            "PS4=$(touch x)",
            "ENV",
            "ENVX=1",
            "BASH_FUNC_=",
        ]
        .map(|a| CString::new(a).unwrap());
        let mut ptrs: Vec<*const u8> = env.iter().map(|a| a.as_ptr().cast()).collect();
        ptrs.push(std::ptr::null());
        // SAFETY: a writable NULL-terminated array of live strings.
        unsafe { strip_environment(ptrs.as_mut_ptr()) };
        let end = ptrs.iter().position(|p| p.is_null()).unwrap();
        // SAFETY: the pointers kept point to live strings.
        let kept: Vec<&[u8]> = ptrs[..end].iter().map(|&p| unsafe { c_bytes(p) }).collect();
        assert_eq!(kept, [&b"PATH=/bin"[..], b"HOME=/h", b"ENVX=1"]);
        // Each name the full shim strips is stripped here too.
        for name in STRIPPED_VARIABLES {
            assert!(runs_as_code(format!("{name}=x").as_bytes()), "{name}");
        }
    }

    #[test]
    fn numbers_are_written_in_decimal() {
        let mut buf = [b'-'; 24];
        for (n, text) in [(0, "0"), (13, "13"), (usize::MAX, "18446744073709551615")] {
            let end = put_decimal(&mut buf, 2, n).unwrap();
            assert_eq!(&buf[2..end], text.as_bytes());
        }
        assert_eq!(put_decimal(&mut buf, 23, 10), None);
    }
}
