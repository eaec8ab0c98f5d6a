//! Programs whose effects leave the box by nature.
//!
//! Under `aileron launch` the box (Landlock, mount and network namespaces)
//! holds what an allowed command starts, so an exec inside it may follow
//! the command that started it. These programs act outside the box by
//! what they are: they ask another user's privileges or a privileged
//! daemon, reach another host or a host socket, enter or make namespaces,
//! or have a service run something later. Each is decided on its own at
//! its exec, never by the command that started it.
//!
//! To add a program: put its name (as the file is named, or as it is run)
//! in the group that says why.

/// Each group: why its programs leave the box, and their names.
const GROUPS: &[(&str, &[&str])] = &[
    // Another user's (root's) privileges, through a setuid helper, a
    // daemon (polkit, systemd) or a plugin.
    (
        "it runs as another user",
        &[
            "sudo", "sudoedit", "sudo-rs", "su", "doas", "pkexec", "run0", "runuser", "setpriv",
            "gosu", "su-exec", "sg", "newgrp", "capsh",
        ],
    ),
    // Other machines over their own protocols, with the user's keys.
    (
        "it reaches another host",
        &[
            "ssh", "scp", "sftp", "slogin", "mosh", "telnet", "rsh", "rlogin", "rcp", "sshfs",
        ],
    ),
    // Agents and keyrings that hold the user's secrets outside the box.
    (
        "it reaches the user's keys",
        &["ssh-add", "gpg-connect-agent", "secret-tool", "keyctl"],
    ),
    // Other namespaces, another root, other mounts than the box's.
    (
        "it enters or makes namespaces or mounts",
        &[
            "nsenter",
            "unshare",
            "ip",
            "chroot",
            "pivot_root",
            "switch_root",
            "mount",
            "umount",
            "fusermount",
            "fusermount3",
            "bwrap",
            "firejail",
            "systemd-nspawn",
            "lxc-attach",
            "lxc-execute",
            "lxc-start",
        ],
    ),
    // The running kernel is the host's.
    (
        "it changes the host's kernel",
        &["modprobe", "insmod", "rmmod", "kexec", "bpftool"],
    ),
    // The service, login, network and disk managers act on the host.
    (
        "it asks a manager of the host",
        &[
            "systemd-run",
            "systemctl",
            "machinectl",
            "loginctl",
            "homectl",
            "hostnamectl",
            "timedatectl",
            "localectl",
            "resolvectl",
            "networkctl",
            "nmcli",
            "udisksctl",
            "shutdown",
            "reboot",
            "poweroff",
            "halt",
            "snap",
            "flatpak",
            "pkcon",
        ],
    ),
    // Run later by a daemon, outside the session.
    (
        "it schedules a job on the host",
        &["at", "batch", "crontab"],
    ),
    // Run by a portal, a terminal or an editor that lives outside the
    // box (a tmux server started before the session runs what it is sent).
    (
        "it has a program outside the box run a command",
        &[
            "flatpak-spawn",
            "host-spawn",
            "distrobox-host-exec",
            "tmux",
            "screen",
            "zellij",
            "emacsclient",
            "gnome-terminal",
            "kitten",
            "wezterm",
            "xdg-open",
            "gio",
        ],
    ),
    // Clients of a container, cluster or VM engine: the daemon acts for them.
    (
        "it drives a container or VM engine",
        &[
            "docker",
            "docker-compose",
            "podman",
            "podman-remote",
            "nerdctl",
            "ctr",
            "crictl",
            "buildah",
            "kubectl",
            "oc",
            "helm",
            "lxc",
            "incus",
            "virsh",
            "vagrant",
            "VBoxManage",
            "multipass",
            "limactl",
            "minikube",
            "kind",
        ],
    ),
    // The system and session buses reach every service on them.
    (
        "it talks to a D-Bus service",
        &[
            "busctl",
            "dbus-send",
            "gdbus",
            "qdbus",
            "gsettings",
            "dconf",
        ],
    ),
    // Arbitrary sockets: a host's Unix sockets, ports and listeners.
    (
        "it connects arbitrary sockets",
        &["socat", "nc", "netcat", "ncat"],
    ),
];

/// Endings of scripts' file names: `docker.sh` runs a shell, not docker
/// (what it starts is decided at its own exec).
const SCRIPT_ENDINGS: &[&str] = &["sh", "bash", "zsh", "py", "pl", "rb", "js", "mjs", "ts"];

/// Why the program named `binary` (a name or a path: its file name
/// counts) leaves the box, or `None` when it stays in it. A name with a
/// dotted ending counts as its stem: Debian's alternatives resolve `nc`
/// to `nc.openbsd` and `telnet` to `telnet.netkit`, and a caller chooses
/// `argv[0]`, so the loaded file's own name must be recognised.
pub fn leaves_box(binary: &str) -> Option<&'static str> {
    let name = binary.rsplit('/').next().unwrap_or(binary);
    let stem = name
        .split_once('.')
        .filter(|(stem, ending)| !stem.is_empty() && !SCRIPT_ENDINGS.contains(ending))
        .map(|(stem, _)| stem);
    GROUPS
        .iter()
        .find(|(_, names)| names.contains(&name) || stem.is_some_and(|s| names.contains(&s)))
        .map(|(why, _)| *why)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_leaves_by_its_file_name_wherever_it_is() {
        assert_eq!(leaves_box("sudo"), Some("it runs as another user"));
        assert_eq!(
            leaves_box("/usr/bin/unshare"),
            Some("it enters or makes namespaces or mounts")
        );
        assert_eq!(
            leaves_box("./crontab"),
            Some("it schedules a job on the host")
        );
        assert_eq!(leaves_box("make"), None);
        assert_eq!(
            leaves_box("/usr/bin/telnet.netkit"),
            Some("it reaches another host")
        );
        assert_eq!(
            leaves_box("/usr/lib/cargo/bin/sudo"),
            Some("it runs as another user")
        );
        assert_eq!(
            leaves_box("nc.openbsd"),
            Some("it connects arbitrary sockets")
        );
        assert_eq!(leaves_box("./docker.sh"), None);
        assert_eq!(leaves_box("ssh-keygen"), None);
        assert_eq!(leaves_box(".ssh"), None);
        assert_eq!(leaves_box("/usr/bin/sshd-like"), None);
        assert_eq!(leaves_box(""), None);
    }

    #[test]
    fn no_name_is_in_two_groups() {
        let mut all: Vec<&str> = GROUPS.iter().flat_map(|(_, n)| n.iter().copied()).collect();
        let n = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), n);
    }
}
