//! Fuzz target: see `ctxbudget_fuzz::transform_spec`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| ctxbudget_fuzz::transform_spec(data));
