//! Fuzz target: see `ctxbudget_fuzz::policy_file`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| ctxbudget_fuzz::policy_file(data));
