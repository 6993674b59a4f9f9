//! This process's memory, as the kernel counts it.

/// Resident memory of this process: now and at its peak, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessMemory {
    pub resident: u64,
    pub peak_resident: u64,
}

/// This process's resident memory (`VmRSS`, `VmHWM` of `/proc/self/status`);
/// `None` where the platform does not say.
pub fn process_memory() -> Option<ProcessMemory> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    parse_status(&status)
}

fn parse_status(status: &str) -> Option<ProcessMemory> {
    let kib = |field: &str| -> Option<u64> {
        let line = status.lines().find(|l| l.starts_with(field))?;
        let n = line[field.len()..].trim().strip_suffix("kB")?.trim();
        n.parse::<u64>().ok().map(|k| k * 1024)
    };
    Some(ProcessMemory { resident: kib("VmRSS:")?, peak_resident: kib("VmHWM:")? })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_kernels_fields() {
        let status = "Name:\tironbees\nVmHWM:\t  204800 kB\nVmRSS:\t  102400 kB\nThreads:\t4\n";
        assert_eq!(
            parse_status(status),
            Some(ProcessMemory { resident: 100 << 20, peak_resident: 200 << 20 })
        );
        assert_eq!(parse_status("Name:\tx\n"), None);
        #[cfg(target_os = "linux")]
        {
            let m = process_memory().unwrap();
            assert!(m.resident > 0 && m.peak_resident >= m.resident, "{m:?}");
        }
    }
}
