//! What machine a figure was taken on: the CPU model, the cores this
//! process may use, and whether the CPU has restricted transactional
//! memory (Intel RTM). Machines of one kind differ (an AMD EPYC without
//! RTM, an Intel Xeon with it), so every report records this, and figures
//! are compared only when it is the same.

use std::sync::OnceLock;

/// The machine this process runs on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Machine {
    /// The CPU's model name (`/proc/cpuinfo`), or `unknown`.
    pub cpu: String,
    /// Cores this process may use (`std::thread::available_parallelism`).
    pub cores: usize,
    /// Whether the CPU reports RTM (`xbegin`/`xend`).
    pub rtm: bool,
}

impl Machine {
    /// This machine, looked up once per process.
    pub fn this() -> &'static Machine {
        static THIS: OnceLock<Machine> = OnceLock::new();
        THIS.get_or_init(|| Machine {
            cpu: std::fs::read_to_string("/proc/cpuinfo")
                .ok()
                .and_then(|s| cpu_model(&s))
                .unwrap_or_else(|| "unknown".to_string()),
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            rtm: has_rtm(),
        })
    }

    /// `AMD EPYC, 2 cores, no RTM`.
    pub fn describe(&self) -> String {
        format!(
            "{}, {} cores, {}",
            self.cpu,
            self.cores,
            if self.rtm { "RTM" } else { "no RTM" }
        )
    }
}

/// The first `model name` of a `/proc/cpuinfo` text.
fn cpu_model(cpuinfo: &str) -> Option<String> {
    cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|v| !v.is_empty())
}

#[cfg(target_arch = "x86_64")]
fn has_rtm() -> bool {
    std::is_x86_feature_detected!("rtm")
}

#[cfg(not(target_arch = "x86_64"))]
fn has_rtm() -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_is_the_first_model_name_with_its_spaces_folded() {
        let text = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD  EPYC 7B13\nflags\t: fpu\nmodel name\t: other\n";
        assert_eq!(cpu_model(text).as_deref(), Some("AMD EPYC 7B13"));
        assert_eq!(cpu_model("processor\t: 0\n"), None);
        assert_eq!(cpu_model("model name\t:   \n"), None);
    }

    #[test]
    fn this_machine_is_described_in_one_line() {
        let m = Machine::this();
        assert!(m.cores >= 1);
        let d = m.describe();
        assert!(
            d.contains(" cores, ") && (d.ends_with(", RTM") || d.ends_with(", no RTM")),
            "{d}"
        );
        assert!(!d.contains('\n'));
    }
}
