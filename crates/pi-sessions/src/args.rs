//! Hand-rolled argument parsing: `--long`, `--long=value`, `--long value`, `-s`, `-s value`,
//! combined short flags (`-ij`), and `--` to end options. Unknown options are usage errors.

use super::CliError;

#[derive(Clone, Copy, Debug)]
pub struct Opt {
    pub long: &'static str,
    pub short: Option<char>,
    /// Takes a value.
    pub value: bool,
}

pub const fn flag(long: &'static str, short: Option<char>) -> Opt {
    Opt { long, short, value: false }
}

pub const fn opt(long: &'static str, short: Option<char>) -> Opt {
    Opt { long, short, value: true }
}

/// Options accepted by every command.
pub const GLOBAL: &[Opt] = &[
    opt("agent-dir", None),
    opt("dir", None),
    opt("color", None),
    flag("no-color", None),
    opt("jobs", Some('j')),
    flag("help", Some('h')),
];

#[derive(Debug, Default)]
pub struct Parsed {
    pub pos: Vec<String>,
    vals: Vec<(&'static str, Option<String>)>,
}

impl Parsed {
    pub fn has(&self, long: &str) -> bool {
        self.vals.iter().any(|(k, _)| *k == long)
    }

    /// The last value given for an option.
    pub fn get(&self, long: &str) -> Option<&str> {
        self.vals.iter().rev().find(|(k, _)| *k == long).and_then(|(_, v)| v.as_deref())
    }

    pub fn num(&self, long: &str) -> Result<Option<usize>, CliError> {
        match self.get(long) {
            None => Ok(None),
            Some(v) => v
                .parse::<usize>()
                .map(Some)
                .map_err(|_| CliError::Usage(format!("--{long} expects a non-negative integer, got {v:?}"))),
        }
    }

    /// One of a fixed set of values.
    pub fn choice(&self, long: &str, allowed: &[&str]) -> Result<Option<String>, CliError> {
        match self.get(long) {
            None => Ok(None),
            Some(v) if allowed.contains(&v) => Ok(Some(v.to_string())),
            Some(v) => Err(CliError::Usage(format!("--{long} must be one of {}, got {v:?}", allowed.join(", ")))),
        }
    }
}

fn find<'a>(specs: &'a [&'a [Opt]], pred: impl Fn(&Opt) -> bool) -> Option<&'a Opt> {
    specs.iter().flat_map(|s| s.iter()).find(|o| pred(o))
}

/// Parses `args` against the given option tables. `cmd` names the command in messages.
pub fn parse(args: &[String], specs: &[&[Opt]], cmd: &str) -> Result<Parsed, CliError> {
    let unknown = |a: &str| CliError::Usage(format!("unknown option {a} for `{cmd}` (see `pi-sessions {cmd} --help`)"));
    let mut out = Parsed::default();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if a == "--" {
            out.pos.extend(args[i..].iter().cloned());
            break;
        }
        if let Some(body) = a.strip_prefix("--") {
            let (name, inline) = match body.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (body, None),
            };
            let o = find(specs, |o| o.long == name).ok_or_else(|| unknown(a))?;
            if o.value {
                let v = match inline {
                    Some(v) => v,
                    None => {
                        let v = args.get(i).ok_or_else(|| CliError::Usage(format!("--{name} needs a value")))?;
                        i += 1;
                        v.clone()
                    }
                };
                out.vals.push((o.long, Some(v)));
            } else {
                if inline.is_some() {
                    return Err(CliError::Usage(format!("--{name} takes no value")));
                }
                out.vals.push((o.long, None));
            }
            continue;
        }
        if a.len() > 1 && a.starts_with('-') && !a[1..].starts_with(|c: char| c.is_ascii_digit()) {
            let chars: Vec<char> = a[1..].chars().collect();
            let mut k = 0;
            while k < chars.len() {
                let c = chars[k];
                k += 1;
                let o = find(specs, |o| o.short == Some(c)).ok_or_else(|| unknown(&format!("-{c}")))?;
                if o.value {
                    let rest: String = chars[k..].iter().collect();
                    let v = if !rest.is_empty() {
                        rest
                    } else {
                        let v = args.get(i).ok_or_else(|| CliError::Usage(format!("-{c} needs a value")))?;
                        i += 1;
                        v.clone()
                    };
                    out.vals.push((o.long, Some(v)));
                    break;
                }
                out.vals.push((o.long, None));
            }
            continue;
        }
        out.pos.push(a.clone());
    }
    Ok(out)
}

/// Splits off the command name: the first argument that is neither an option nor the value
/// of a global option. Returns (command, the other arguments in order).
pub fn split_command(args: &[String]) -> (Option<String>, Vec<String>) {
    let mut rest = Vec::with_capacity(args.len());
    let mut cmd = None;
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if cmd.is_none() {
            if a == "--" {
                rest.extend(args[i - 1..].iter().cloned());
                break;
            }
            if let Some(body) = a.strip_prefix("--") {
                rest.push(a.clone());
                let takes = GLOBAL.iter().any(|o| o.value && o.long == body);
                if takes && i < args.len() {
                    rest.push(args[i].clone());
                    i += 1;
                }
                continue;
            }
            if a.len() > 1 && a.starts_with('-') {
                rest.push(a.clone());
                let takes = a.len() == 2 && GLOBAL.iter().any(|o| o.value && o.short == a.chars().nth(1));
                if takes && i < args.len() {
                    rest.push(args[i].clone());
                    i += 1;
                }
                continue;
            }
            cmd = Some(a.clone());
            continue;
        }
        rest.push(a.clone());
    }
    (cmd, rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn parses_forms() {
        let spec: &[Opt] = &[flag("json", None), flag("ignore-case", Some('i')), opt("role", Some('r'))];
        let p =
            parse(&s(&["x", "--json", "-ir", "user", "--role=assistant", "--", "-i"]), &[GLOBAL, spec], "t").unwrap();
        assert_eq!(p.pos, s(&["x", "-i"]));
        assert!(p.has("json") && p.has("ignore-case"));
        assert_eq!(p.get("role"), Some("assistant"));
        assert!(parse(&s(&["--nope"]), &[GLOBAL, spec], "t").is_err());
        assert!(parse(&s(&["--role"]), &[GLOBAL, spec], "t").is_err());
        assert!(parse(&s(&["--json=1"]), &[GLOBAL, spec], "t").is_err());
    }

    #[test]
    fn command_split() {
        let (c, r) = split_command(&s(&["--agent-dir", "/a", "-j", "2", "ls", "--all"]));
        assert_eq!(c.as_deref(), Some("ls"));
        assert_eq!(r, s(&["--agent-dir", "/a", "-j", "2", "--all"]));
    }
}
