//! Fuzz target: see `ctxbudget_fuzz::detect`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| ctxbudget_fuzz::detect(data));
