//! `nproc`, `whoami` and `id` as GNU coreutils print them, about the sandbox a command runs
//! in: one processor (a guest runs on one thread; WASI has no threads to spread work over), and
//! the one user and group every file shows in `ls -l` and `stat` ([`OWNER`], [`GROUP`], id 0).

use crate::getopt::{Long, parse_or_say, words};
use crate::usage::{GROUP, OWNER};

/// The user's and group's id, as `stat` and `ls -n` show them.
const ID: u32 = 0;

/// `nproc [--all] [--ignore=N]`: the processors a guest can use, 1.
pub fn nproc(args: super::Args) -> i32 {
    let args = words(args);
    let long: &[Long] = &[
        ("all", 'a', false),
        ("ignore", 'i', true),
        ("help", 'h', false),
    ];
    let Some(o) = parse_or_say("nproc", &args, "", long) else {
        return 1;
    };
    if o.has('h') {
        println!(
            "Usage: nproc [--all] [--ignore=N]\nPrint the number of processing units available (1 in the sandbox)."
        );
        return 0;
    }
    if let Some(extra) = o.operands.first() {
        eprintln!("nproc: extra operand '{extra}'\nTry 'nproc --help' for more information.");
        return 1;
    }
    if let Some(n) = o.value('i')
        && n.parse::<u64>().is_err()
    {
        eprintln!("nproc: invalid number: '{n}'");
        return 1;
    }
    // GNU never prints fewer than 1, whatever --ignore says.
    println!("1");
    0
}

/// The sandbox's host name, as the toolbox's `uname -n` says it.
const HOST: &str = "localhost";

/// `hostname [-a|-A|-d|-f|-i|-I|-s]` as Debian's hostname prints them about the sandbox: its
/// name is [`HOST`], which has no domain and no alias; its one address is the loopback one.
/// `-I`/`-A` list the addresses (names) of the host's network interfaces other than loopback:
/// the sandbox has none, so they print the empty line hostname prints for such a host. Setting
/// the name (`hostname NAME`, `-F`, `-b`) and NIS (`-y`) are refused: the sandbox cannot.
pub fn hostname(args: super::Args) -> i32 {
    let args = words(args);
    let long: &[Long] = &[
        ("alias", 'a', false),
        ("all-fqdns", 'A', false),
        ("boot", 'b', false),
        ("domain", 'd', false),
        ("fqdn", 'f', false),
        ("long", 'f', false),
        ("file", 'F', true),
        ("ip-address", 'i', false),
        ("all-ip-addresses", 'I', false),
        ("short", 's', false),
        ("yp", 'y', false),
        ("nis", 'y', false),
        ("version", 'V', false),
        ("help", 'h', false),
    ];
    let usage = "Usage: hostname [-a|-A|-d|-f|-i|-I|-s]       display formatted name\n       \
                 hostname                              display host name\n       \
                 hostname -V|--version|-h|--help       print info and exit";
    let o = match crate::getopt::parse(&args, "aAbdfF:iIsyVh", long) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("hostname: {e}\n{usage}");
            // hostname exits with -1 (255), which a WASI program cannot: statuses stop below 126.
            return 1;
        }
    };
    if o.has('h') {
        println!("{usage}");
        return 0;
    }
    if o.has('V') {
        println!("hostname 3.23 (the sandbox's)");
        return 0;
    }
    if o.has('y') {
        eprintln!("hostname: NIS domain names (-y) are not available in the sandbox");
        return 1;
    }
    if !o.operands.is_empty() || o.has('F') || o.has('b') {
        eprintln!("hostname: the sandbox cannot change the host name");
        return 1;
    }
    // The last display option wins, as in hostname.
    let last = o.opts.iter().rev().map(|(c, _)| *c).next();
    match last {
        None | Some('s' | 'f') => println!("{HOST}"),
        Some('i') => println!("127.0.0.1"),
        // No domain: hostname prints nothing at all.
        Some('d') => {}
        // No alias, and no interface but loopback: an empty line.
        Some('a' | 'A' | 'I') => println!(),
        Some(_) => println!("{HOST}"),
    }
    0
}

/// `whoami`: the user's name.
pub fn whoami(args: super::Args) -> i32 {
    let args = words(args);
    let long: &[Long] = &[("help", 'h', false)];
    let Some(o) = parse_or_say("whoami", &args, "", long) else {
        return 1;
    };
    if o.has('h') {
        println!(
            "Usage: whoami\nPrint the user name associated with the current effective user ID."
        );
        return 0;
    }
    if let Some(extra) = o.operands.first() {
        eprintln!("whoami: extra operand '{extra}'\nTry 'whoami --help' for more information.");
        return 1;
    }
    println!("{OWNER}");
    0
}

/// `id [-u | -g | -G] [-n] [-r] [-z] [USER]`.
pub fn id(args: super::Args) -> i32 {
    let args = words(args);
    let long: &[Long] = &[
        ("user", 'u', false),
        ("group", 'g', false),
        ("groups", 'G', false),
        ("name", 'n', false),
        ("real", 'r', false),
        ("zero", 'z', false),
        ("help", 'h', false),
    ];
    let Some(o) = parse_or_say("id", &args, "ugGnrz", long) else {
        return 1;
    };
    if o.has('h') {
        println!(
            "Usage: id [-u | -g | -G] [-n] [-r] [-z] [USER]\nPrint user and group information (the sandbox has one user and one group)."
        );
        return 0;
    }
    match o.operands.as_slice() {
        [] => {}
        [user] if user == OWNER || user == &ID.to_string() => {}
        [user] => {
            eprintln!("id: '{user}': no such user");
            return 1;
        }
        [_, extra, ..] => {
            eprintln!("id: extra operand '{extra}'\nTry 'id --help' for more information.");
            return 1;
        }
    }
    let which: Vec<char> = ['u', 'g', 'G'].into_iter().filter(|c| o.has(*c)).collect();
    let end = if o.has('z') { '\0' } else { '\n' };
    let (user, group) = match which.as_slice() {
        [] => {
            if o.has('n') || o.has('r') {
                eprintln!("id: cannot print only names or real IDs in default format");
                return 1;
            }
            if o.has('z') {
                eprintln!("id: option --zero not permitted in default format");
                return 1;
            }
            println!("uid={ID}({OWNER}) gid={ID}({GROUP}) groups={ID}({GROUP})");
            return 0;
        }
        [_] => (OWNER, GROUP),
        _ => {
            eprintln!("id: cannot print \"only\" of more than one choice");
            return 1;
        }
    };
    let shown = match (which[0], o.has('n')) {
        (_, false) => ID.to_string(),
        ('u', true) => user.to_owned(),
        (_, true) => group.to_owned(),
    };
    print!("{shown}{end}");
    0
}
