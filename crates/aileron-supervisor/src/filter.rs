//! The seccomp filter the agent's tree runs under. It is inherited across
//! fork and exec and cannot be removed; a process may only add filters.
//!
//! - `execve` and `execveat` go to the supervisor (user notification);
//!   in a box with a network of its own, so do `connect` and a `sendto`
//!   that names an address: the supervisor makes them (`sockets`).
//! - Calls that would let a process change another's memory while the
//!   supervisor reads an exec's arguments are refused: `ptrace`,
//!   `process_vm_writev`, and `clone` sharing memory with a process other
//!   than a thread or a suspended vfork parent. `clone3` passes its flags
//!   in memory the filter cannot read, so it answers `ENOSYS` and the C
//!   library falls back to `clone`.
//! - Calls that change the mount table or enter another mount namespace
//!   (which would uncover the files the policy protects) are refused;
//!   `io_uring_setup` too, since its requests run outside the filter.
//! - Another architecture's calls (x32, 32-bit) are refused.
//! - A process of the box cannot type into the terminal it shares with
//!   the shell outside (`ioctl` `TIOCSTI`, `TIOCLINUX`: what it types would
//!   run there once the agent ends), nor reach the kernel's keyrings
//!   (`keyctl`, `add_key`, `request_key`: credentials kept there).

use libc::{sock_filter, sock_fprog};

// Offsets into `struct seccomp_data`.
const NR: u32 = 0;
const ARCH: u32 = 4;
const ARG0_LO: u32 = 16;
const ARG1_LO: u32 = 24;
const ARG4_LO: u32 = 48;
const ARG4_HI: u32 = 52;

const RET_ALLOW: u32 = libc::SECCOMP_RET_ALLOW;
const RET_NOTIFY: u32 = libc::SECCOMP_RET_USER_NOTIF;
const fn ret_errno(e: i32) -> u32 {
    libc::SECCOMP_RET_ERRNO | (e as u32 & libc::SECCOMP_RET_DATA)
}

#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xC000_00B7;
#[cfg(target_arch = "x86_64")]
const X32_BIT: u32 = 0x4000_0000;

/// Calls answered with an error, and which.
fn refused() -> Vec<(libc::c_long, i32)> {
    let mut v = vec![
        (libc::SYS_clone3, libc::ENOSYS),
        (libc::SYS_ptrace, libc::EPERM),
        (libc::SYS_process_vm_writev, libc::EPERM),
        (libc::SYS_io_uring_setup, libc::EPERM),
        (libc::SYS_mount, libc::EPERM),
        (libc::SYS_umount2, libc::EPERM),
        (libc::SYS_pivot_root, libc::EPERM),
        (libc::SYS_move_mount, libc::EPERM),
        (libc::SYS_open_tree, libc::EPERM),
        (libc::SYS_fsopen, libc::EPERM),
        (libc::SYS_fsmount, libc::EPERM),
        (libc::SYS_fspick, libc::EPERM),
        (libc::SYS_mount_setattr, libc::EPERM),
        // Entering another process's mount namespace (the host's) would
        // leave the read-only mounts behind.
        (libc::SYS_setns, libc::EPERM),
        // The user's keyrings hold credentials the box masks elsewhere.
        (libc::SYS_keyctl, libc::EPERM),
        (libc::SYS_add_key, libc::EPERM),
        (libc::SYS_request_key, libc::EPERM),
    ];
    v.sort_unstable();
    v
}

fn stmt(code: u32, k: u32) -> sock_filter {
    sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    }
}

fn jump(code: u32, k: u32, jt: u8, jf: u8) -> sock_filter {
    sock_filter {
        code: code as u16,
        jt,
        jf,
        k,
    }
}

const LD_W_ABS: u32 = libc::BPF_LD | libc::BPF_W | libc::BPF_ABS;
const JEQ_K: u32 = libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K;
/// Only x86-64 has a second system-call table (x32) to shut.
#[cfg(target_arch = "x86_64")]
const JGE_K: u32 = libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K;
const JSET_K: u32 = libc::BPF_JMP | libc::BPF_JSET | libc::BPF_K;
const RET_K: u32 = libc::BPF_RET | libc::BPF_K;
/// `TIOCLINUX` (linux/tiocl.h), which also pastes into a console.
const TIOCLINUX: u32 = 0x541C;

/// The filter program; without `notify`, execs pass (`--enforce files`
/// alone still needs the rest: the mounts must stay); with `sockets` (and
/// `notify`), connections go to the supervisor too.
pub fn program(notify: bool, sockets: bool) -> Vec<sock_filter> {
    let mut p = vec![
        stmt(LD_W_ABS, ARCH),
        jump(JEQ_K, AUDIT_ARCH, 1, 0),
        stmt(RET_K, ret_errno(libc::EPERM)),
        stmt(LD_W_ABS, NR),
    ];
    #[cfg(target_arch = "x86_64")]
    {
        p.push(jump(JGE_K, X32_BIT, 0, 1));
        p.push(stmt(RET_K, ret_errno(libc::EPERM)));
    }
    if notify {
        for nr in [libc::SYS_execve, libc::SYS_execveat] {
            p.push(jump(JEQ_K, nr as u32, 0, 1));
            p.push(stmt(RET_K, RET_NOTIFY));
        }
    }
    if notify && sockets {
        p.extend([
            jump(JEQ_K, libc::SYS_connect as u32, 0, 1),
            stmt(RET_K, RET_NOTIFY),
            // sendto(fd, buf, len, flags, addr, addrlen): with an address.
            jump(JEQ_K, libc::SYS_sendto as u32, 0, 6),
            stmt(LD_W_ABS, ARG4_LO),
            jump(JEQ_K, 0, 0, 2),
            stmt(LD_W_ABS, ARG4_HI),
            jump(JEQ_K, 0, 1, 0),
            stmt(RET_K, RET_NOTIFY),
            stmt(RET_K, RET_ALLOW),
        ]);
    }
    for (nr, errno) in refused() {
        p.push(jump(JEQ_K, nr as u32, 0, 1));
        p.push(stmt(RET_K, ret_errno(errno)));
    }
    // ioctl(fd, request): pushing input into a terminal is refused.
    p.extend([
        jump(JEQ_K, libc::SYS_ioctl as u32, 0, 5),
        stmt(LD_W_ABS, ARG1_LO),
        jump(JEQ_K, libc::TIOCSTI as u32, 1, 0),
        jump(JEQ_K, TIOCLINUX, 0, 1),
        stmt(RET_K, ret_errno(libc::EPERM)),
        stmt(RET_K, RET_ALLOW),
    ]);
    // clone(flags, ...): CLONE_VM is allowed with CLONE_THREAD (a thread),
    // or with CLONE_VFORK and not CLONE_PARENT (the caller waits, and is
    // the child's parent, where the supervisor looks for it).
    const VM: u32 = libc::CLONE_VM as u32;
    const THREAD: u32 = libc::CLONE_THREAD as u32;
    const VFORK: u32 = libc::CLONE_VFORK as u32;
    const PARENT: u32 = libc::CLONE_PARENT as u32;
    p.extend([
        jump(JEQ_K, libc::SYS_clone as u32, 0, 7),
        stmt(LD_W_ABS, ARG0_LO),
        jump(JSET_K, VM, 0, 5),
        jump(JSET_K, THREAD, 4, 0),
        jump(JSET_K, VFORK, 0, 2),
        jump(JSET_K, PARENT, 1, 0),
        stmt(RET_K, RET_ALLOW),
        stmt(RET_K, ret_errno(libc::EPERM)),
        stmt(RET_K, RET_ALLOW),
    ]);
    p
}

/// Installs `prog` on the calling thread, with a notification listener
/// when `listener`, and returns the listener's descriptor (0 without one),
/// or -1 with errno set. Called between fork and exec: no allocation, only
/// system calls.
///
/// # Safety
/// `prog` must outlive the call; the caller must be single-threaded (a
/// forked child).
pub unsafe fn install(prog: &[sock_filter], listener: bool) -> libc::c_int {
    let flags = if listener {
        libc::SECCOMP_FILTER_FLAG_NEW_LISTENER | libc::SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
    } else {
        0
    };
    let fprog = sock_fprog {
        len: prog.len() as u16,
        filter: prog.as_ptr() as *mut sock_filter,
    };
    // SAFETY: fprog points at a valid program for the duration of the call.
    unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            flags,
            &fprog as *const sock_fprog,
        ) as libc::c_int
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_jump_lands_inside_the_program() {
        for p in [
            program(true, true),
            program(true, false),
            program(false, false),
        ] {
            for (i, ins) in p.iter().enumerate() {
                if u32::from(ins.code) & 0x07 == libc::BPF_JMP {
                    assert!(i + 1 + (ins.jt as usize) < p.len(), "jt of {i}");
                    assert!(i + 1 + (ins.jf as usize) < p.len(), "jf of {i}");
                }
            }
            let last = p.last().unwrap();
            assert_eq!(u32::from(last.code), RET_K);
        }
    }
}
