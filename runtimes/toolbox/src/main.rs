//! One WebAssembly program for the commands of uutils coreutils that `execute_command` runs
//! inside the session's sandbox: the command is `argv[0]` (a multi-call binary, as coreutils'
//! own), the working directory is `$PWD` (WASI has none of its own; the worker sets it to the
//! shell's), and every path goes through the session's preopened directories.

use std::ffi::OsString;
use std::io::Write;
use std::process::{ExitCode, exit};

mod above_mounts;
mod archive;
mod awk;
mod bc;
mod chmod;
mod column;
mod diff;
mod file_type;
mod find;
mod getopt;
mod glob;
mod grep;
mod guest_path;
mod hexdump;
mod identity;
mod jq;
mod own;
mod pager;
mod patch;
mod posix;
mod sed;
mod shell_files;
mod tree;
mod unzip;
mod usage;
mod xxd;
mod zip;
mod zipfile;

/// The commands this program runs, sorted (the worker's list of them is checked against this).
pub const COMMANDS: &[&str] = &include!("commands.rs");

type Args = std::vec::IntoIter<OsString>;

fn run(name: &str, args: Args) -> Option<i32> {
    Some(match name {
        "awk" => awk::main(args.skip(1)),
        "bc" => bc::main(args),
        "chmod" => chmod::main(args),
        "column" => column::main(args),
        "cmp" => exit_status(diffutilslib::cmp::main(std::env::args_os().peekable())),
        "diff" => diff::main(args),
        "file" => file_type::main(args),
        "find" => find::main(args),
        "grep" => grep::main(args),
        "hd" => hexdump::main("hd", args),
        "hexdump" => hexdump::main("hexdump", args),
        "hostname" => identity::hostname(args),
        "id" => identity::id(args),
        "jq" => jq::main(args),
        "nproc" => identity::nproc(args),
        "whoami" => identity::whoami(args),
        "xxd" => xxd::main(args),
        "rev" => own::rev(args),
        "sed" => sed::main(args),
        "tar" => archive::tar(args),
        "gzip" => archive::gzip("gzip", args),
        "gunzip" => archive::gzip("gunzip", args),
        "zcat" => archive::gzip("zcat", args),
        "du" => usage::du(args),
        "stat" => usage::stat(args),
        "tac" => own::tac(args),
        "less" => pager::less(args),
        "more" => pager::more(args),
        "tree" => tree::main(args),
        "zip" => zip::main(args),
        "unzip" => unzip::main("unzip", args),
        "zipinfo" => unzip::main("zipinfo", args),
        "arch" => uu_arch::uumain(args),
        "b2sum" => uu_b2sum::uumain(args),
        "base32" => uu_base32::uumain(args),
        "base64" => uu_base64::uumain(args),
        "basename" => uu_basename::uumain(args),
        "basenc" => uu_basenc::uumain(args),
        "cat" => uu_cat::uumain(args),
        "cksum" => uu_cksum::uumain(args),
        "comm" => uu_comm::uumain(args),
        "cp" => uu_cp::uumain(args),
        "csplit" => uu_csplit::uumain(args),
        "cut" => uu_cut::uumain(args),
        "date" => uu_date::uumain(args),
        "dirname" => uu_dirname::uumain(args),
        "expand" => uu_expand::uumain(args),
        "expr" => uu_expr::uumain(args),
        "factor" => uu_factor::uumain(args),
        "fmt" => uu_fmt::uumain(args),
        "fold" => uu_fold::uumain(args),
        "head" => uu_head::uumain(args),
        "join" => uu_join::uumain(args),
        "link" => uu_link::uumain(args),
        "ln" => uu_ln::uumain(args),
        "ls" => uu_ls::uumain(args),
        "md5sum" => uu_md5sum::uumain(args),
        "mkdir" => uu_mkdir::uumain(args),
        "mktemp" => uu_mktemp::uumain(args),
        "mv" => uu_mv::uumain(args),
        "nl" => uu_nl::uumain(args),
        "numfmt" => uu_numfmt::uumain(args),
        "od" => uu_od::uumain(args),
        "paste" => uu_paste::uumain(args),
        "patch" => patch::main(args),
        "pathchk" => uu_pathchk::uumain(args),
        "pr" => uu_pr::uumain(args),
        "ptx" => uu_ptx::uumain(args),
        "readlink" => uu_readlink::uumain(args),
        "realpath" => uu_realpath::uumain(args),
        "rm" => uu_rm::uumain(args),
        "rmdir" => uu_rmdir::uumain(args),
        "seq" => uu_seq::uumain(args),
        "sha1sum" => uu_sha1sum::uumain(args),
        "sha224sum" => uu_sha224sum::uumain(args),
        "sha256sum" => uu_sha256sum::uumain(args),
        "sha384sum" => uu_sha384sum::uumain(args),
        "sha512sum" => uu_sha512sum::uumain(args),
        "shuf" => uu_shuf::uumain(args),
        "sort" => uu_sort::uumain(args),
        "split" => uu_split::uumain(args),
        "sum" => uu_sum::uumain(args),
        "tail" => uu_tail::uumain(args),
        "tee" => uu_tee::uumain(args),
        "touch" => uu_touch::uumain(args),
        "tr" => uu_tr::uumain(args),
        "truncate" => uu_truncate::uumain(args),
        "tsort" => uu_tsort::uumain(args),
        "uname" => uu_uname::uumain(args),
        "unexpand" => uu_unexpand::uumain(args),
        "uniq" => uu_uniq::uumain(args),
        "unlink" => uu_unlink::uumain(args),
        "wc" => uu_wc::uumain(args),
        "yes" => uu_yes::uumain(args),
        _ => return None,
    })
}

fn main() {
    // At `/` (above the mounts) the program stays where WASI starts it: wasi-libc's working
    // directory is `/` already, and entering it would fail (`/` is no preopened directory), so
    // `cd /; cat app/x` works and only reading `/` itself fails.
    if let Some(dir) = std::env::var_os("PWD").filter(|dir| dir != "/") {
        if let Err(e) = std::env::set_current_dir(&dir) {
            eprintln!(
                "cannot enter the working directory {}: {e}",
                dir.to_string_lossy()
            );
            exit(1);
        }
    }
    let mut args: Vec<OsString> = uucore::args_os().collect();
    let name = args
        .first()
        .map(|a| {
            a.to_string_lossy()
                .rsplit('/')
                .next()
                .unwrap_or_default()
                .to_owned()
        })
        .unwrap_or_default();
    if name == "--list" {
        println!("{}", COMMANDS.join("\n"));
        exit(0);
    }
    if name == "sandbox-files" {
        exit(shell_files::main(args.into_iter()));
    }
    if !COMMANDS.contains(&name.as_str()) {
        eprintln!("{name}: not a command of this toolbox");
        exit(127);
    }
    if let Err(e) = uucore::locale::setup_localization(&name) {
        eprintln!("{name}: cannot set up its messages: {e}");
        exit(1);
    }
    args[0] = OsString::from(&name);
    if own::refuse_not_gnu(&name, &args) || own::refuse_special_operand(&name, &args) {
        exit(1);
    }
    let mut refused = false;
    if name == "ls" {
        refused = own::refuse_unreachable(&name, &mut args);
        if refused
            && !args
                .iter()
                .skip(1)
                .any(|a| !a.to_string_lossy().starts_with('-'))
        {
            exit(2);
        }
    }
    // mkdir: what did not exist before, to take back if it fails half way.
    let missing = (name == "mkdir").then(|| own::missing_dirs(&args));
    let code = run(&name, args.into_iter()).unwrap_or(127);
    let code = if refused { code.max(2) } else { code };
    if code != 0
        && let Some(missing) = missing
    {
        own::remove_made(&missing);
    }
    if let Err(e) = std::io::stdout().flush() {
        eprintln!("{name}: write error: {e}");
        exit(1);
    }
    exit(code);
}

/// The status an `ExitCode` stands for (diffutils' entry points return one: 0, 1 or 2).
fn exit_status(code: ExitCode) -> i32 {
    if code == ExitCode::SUCCESS {
        0
    } else if code == ExitCode::from(1) {
        1
    } else {
        2
    }
}
