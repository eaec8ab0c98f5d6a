//! Reading a stopped process of the agent's tree: its memory, its
//! `/proc` entries. Every value read here came from a process that may be
//! hostile, so lengths are capped and nothing is trusted beyond its bytes.

use aileron_session::process::{ProcStat, read_proc_file};
use std::path::PathBuf;

/// The most bytes of arguments and environment read for one exec (the
/// kernel's own limit is a quarter of the stack limit, 2 MiB by default).
pub const MAX_ARG_BYTES: usize = 4 << 20;
/// The most argument or environment strings read for one exec.
pub const MAX_STRINGS: usize = 1 << 17;

/// Why a process could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("cannot read the memory of process {pid} at {addr:#x}: {source}")]
    Memory {
        pid: u32,
        addr: u64,
        source: std::io::Error,
    },
    #[error("the exec's arguments exceed {MAX_ARG_BYTES} bytes")]
    TooLong,
    #[error("cannot read /proc/{pid}/{what}: {source}")]
    Proc {
        pid: u32,
        what: &'static str,
        source: std::io::Error,
    },
    #[error("/proc/{pid}/{what} is not what the kernel writes")]
    Malformed { pid: u32, what: &'static str },
}

/// Copies `buf.len()` bytes from `addr` in process `pid`; short reads are errors.
pub fn read_memory(pid: u32, addr: u64, buf: &mut [u8]) -> Result<(), ReadError> {
    let mut done = 0;
    while done < buf.len() {
        let local = libc::iovec {
            iov_base: buf[done..].as_mut_ptr().cast(),
            iov_len: buf.len() - done,
        };
        let remote = libc::iovec {
            iov_base: (addr as usize + done) as *mut libc::c_void,
            iov_len: buf.len() - done,
        };
        // SAFETY: both iovecs describe memory of the right length; the
        // local one is our own buffer.
        let n = unsafe { libc::process_vm_readv(pid as libc::pid_t, &local, 1, &remote, 1, 0) };
        if n <= 0 {
            let source = if n == 0 {
                std::io::Error::from_raw_os_error(libc::EFAULT)
            } else {
                std::io::Error::last_os_error()
            };
            return Err(ReadError::Memory {
                pid,
                addr: addr + done as u64,
                source,
            });
        }
        done += n as usize;
    }
    Ok(())
}

/// Reads another process's memory a page at a time, keeping the pages
/// read: the strings of an exec's arguments and environment mostly share
/// a few pages, and each `process_vm_readv` costs more than the copy.
pub struct Memory {
    pid: u32,
    pages: std::collections::HashMap<u64, Box<[u8; PAGE]>>,
}

const PAGE: usize = 4096;

impl Memory {
    pub fn new(pid: u32) -> Memory {
        Memory {
            pid,
            pages: std::collections::HashMap::new(),
        }
    }

    fn page(&mut self, base: u64) -> Result<&[u8; PAGE], ReadError> {
        if !self.pages.contains_key(&base) {
            let mut page = Box::new([0u8; PAGE]);
            read_memory(self.pid, base, &mut page[..])?;
            self.pages.insert(base, page);
        }
        Ok(&self.pages[&base])
    }

    /// The NUL-ended string at `addr`. `budget` is what may still be read.
    pub fn c_string(&mut self, addr: u64, budget: &mut usize) -> Result<Vec<u8>, ReadError> {
        let mut out = Vec::new();
        let mut at = addr;
        loop {
            let base = at - at % PAGE as u64;
            let offset = (at - base) as usize;
            let page = self.page(base)?;
            let rest = &page[offset..];
            if let Some(end) = rest.iter().position(|&b| b == 0) {
                out.extend_from_slice(&rest[..end]);
                *budget = budget.checked_sub(end + 1).ok_or(ReadError::TooLong)?;
                return Ok(out);
            }
            out.extend_from_slice(rest);
            if out.len() > *budget {
                return Err(ReadError::TooLong);
            }
            at = base + PAGE as u64;
        }
    }

    /// The strings of a NULL-ended array of string pointers (argv, envp).
    /// A NULL array is empty, as the kernel reads it.
    pub fn string_array(
        &mut self,
        addr: u64,
        budget: &mut usize,
    ) -> Result<Vec<Vec<u8>>, ReadError> {
        let mut pointers = Vec::new();
        if addr != 0 {
            let mut at = addr;
            loop {
                let base = at - at % PAGE as u64;
                let offset = (at - base) as usize;
                let page = self.page(base)?;
                let mut ended = false;
                for word in page[offset..].chunks_exact(8) {
                    let p = u64::from_ne_bytes(word.try_into().unwrap_or_default());
                    if p == 0 {
                        ended = true;
                        break;
                    }
                    if pointers.len() >= MAX_STRINGS {
                        return Err(ReadError::TooLong);
                    }
                    *budget = budget.checked_sub(8).ok_or(ReadError::TooLong)?;
                    pointers.push(p);
                }
                if ended {
                    break;
                }
                at = base + PAGE as u64;
            }
        }
        pointers
            .into_iter()
            .map(|p| self.c_string(p, budget))
            .collect()
    }
}

/// A task the supervisor stopped: who it is ([`ProcStat`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Task {
    pub pid: u32,
    /// The thread group (process) the task belongs to.
    pub tgid: u32,
    pub ppid: u32,
    /// With `pid`, names a process even after its number is reused.
    pub start: u64,
}

pub fn task(pid: u32) -> Result<Task, ReadError> {
    let ProcStat { ppid, tgid, start } = ProcStat::read(pid)
        .map_err(|source| ReadError::Proc {
            pid,
            what: "stat",
            source,
        })?
        .ok_or(ReadError::Malformed { pid, what: "stat" })?;
    Ok(Task {
        pid,
        tgid,
        ppid,
        start,
    })
}

/// A process's parent and start time.
pub fn parent_and_start(pid: u32) -> Option<(u32, u64)> {
    let stat = ProcStat::read(pid).ok()??;
    Some((stat.ppid, stat.start))
}

/// Where a `/proc` link of the task points (`cwd`, `exe`, `fd/N`).
pub fn link(pid: u32, what: &str) -> Result<PathBuf, ReadError> {
    std::fs::read_link(format!("/proc/{pid}/{what}")).map_err(|source| ReadError::Proc {
        pid,
        what: "link",
        source,
    })
}

/// The arguments and environment of a process stopped at its exec event
/// (before it runs an instruction of its new program), read from its
/// initial stack: `argc`, the `argv` pointers, NULL, the `envp` pointers,
/// NULL, from the stack pointer up. What `/proc/PID/cmdline` and `environ`
/// give then, in a register read and a few memory reads instead of two
/// `/proc` files; those are read where the stack pointer is not known.
pub fn started_with(tid: u32) -> Result<StartedWith, ReadError> {
    let Some(sp) = stack_pointer(tid) else {
        return Ok(StartedWith {
            argv: cmdline(tid)?,
            envp: environ(tid)?,
        });
    };
    let mut memory = Memory::new(tid);
    let mut budget = MAX_ARG_BYTES;
    let argv = memory.string_array(sp + 8, &mut budget)?;
    let envp_at = sp + 8 * (argv.len() as u64 + 2);
    let envp = memory.string_array(envp_at, &mut budget)?;
    Ok(StartedWith { argv, envp })
}

/// What a process was started with.
pub struct StartedWith {
    pub argv: Vec<Vec<u8>>,
    pub envp: Vec<Vec<u8>>,
}

/// The stack pointer of a task this process traces and that is stopped.
#[cfg(target_arch = "x86_64")]
fn stack_pointer(tid: u32) -> Option<u64> {
    // SAFETY: `regs` is the buffer PTRACE_GETREGS fills on this architecture.
    let mut regs: libc::user_regs_struct = unsafe { std::mem::zeroed() };
    let r = unsafe {
        libc::ptrace(
            libc::PTRACE_GETREGS,
            tid as libc::pid_t,
            0,
            &mut regs as *mut libc::user_regs_struct,
        )
    };
    (r == 0).then_some(regs.rsp)
}

#[cfg(target_arch = "aarch64")]
fn stack_pointer(tid: u32) -> Option<u64> {
    // SAFETY: `regs` and the iovec describing it are what
    // PTRACE_GETREGSET with NT_PRSTATUS fills on this architecture.
    let mut regs: libc::user_regs_struct = unsafe { std::mem::zeroed() };
    let mut iov = libc::iovec {
        iov_base: (&mut regs as *mut libc::user_regs_struct).cast(),
        iov_len: std::mem::size_of::<libc::user_regs_struct>(),
    };
    let r = unsafe {
        libc::ptrace(
            libc::PTRACE_GETREGSET,
            tid as libc::pid_t,
            libc::NT_PRSTATUS as usize,
            &mut iov as *mut libc::iovec,
        )
    };
    (r == 0).then_some(regs.sp)
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn stack_pointer(_tid: u32) -> Option<u64> {
    None
}

/// `/proc/PID/cmdline`: the arguments a process was started with.
pub fn cmdline(pid: u32) -> Result<Vec<Vec<u8>>, ReadError> {
    let raw =
        read_proc_file(&format!("/proc/{pid}/cmdline")).map_err(|source| ReadError::Proc {
            pid,
            what: "cmdline",
            source,
        })?;
    Ok(split_nul(&raw))
}

/// `/proc/PID/environ`.
pub fn environ(pid: u32) -> Result<Vec<Vec<u8>>, ReadError> {
    let raw =
        read_proc_file(&format!("/proc/{pid}/environ")).map_err(|source| ReadError::Proc {
            pid,
            what: "environ",
            source,
        })?;
    Ok(split_nul(&raw))
}

fn split_nul(raw: &[u8]) -> Vec<Vec<u8>> {
    let raw = raw.strip_suffix(&[0]).unwrap_or(raw);
    if raw.is_empty() {
        return Vec::new();
    }
    raw.split(|&b| b == 0).map(<[u8]>::to_vec).collect()
}
