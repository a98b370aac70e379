//! jq 1.6's math builtins on doubles (jaq-std has them behind its `math` feature, which
//! comes only with all of its optional dependencies): `sqrt`, `pow`, `log`, `exp`, the
//! trigonometric ones and their kin.

use jaq_core::box_iter::box_once;
use jaq_core::{Error, Exn, Native, RunPtr, ValXs};
use jaq_std::{Filter, run, v};

use super::print::{as_f64, truncated, type_name};
use super::value::Val;

fn number(v: &Val) -> Result<f64, Error<Val>> {
    as_f64(v).ok_or_else(|| {
        Error::new(Val::from(format!(
            "{} ({}) number required",
            type_name(v),
            truncated(v)
        )))
    })
}

/// A whole number as an integer where one holds it (jaq-std's `floor` saturates at
/// `isize`, 32 bits in WebAssembly), else as a double.
fn whole<'a>(v: &Val, f: fn(f64) -> f64) -> ValXs<'a, Val> {
    let r = number(v).map(|x| {
        let y = f(x);
        if y.is_finite() && y.abs() <= isize::MAX as f64 {
            Val::from(y as isize)
        } else {
            Val::Float(y)
        }
    });
    box_once(r.map_err(Exn::from))
}

fn one<'a>(v: &Val, f: fn(f64) -> f64) -> ValXs<'a, Val> {
    box_once(number(v).map(|x| Val::Float(f(x))).map_err(Exn::from))
}

fn two<'a>(mut cv: jaq_core::Cv<'a, Val>, f: fn(f64, f64) -> f64) -> ValXs<'a, Val> {
    let y = cv.0.pop_var();
    let x = cv.0.pop_var();
    let r = number(&x).and_then(|x| Ok(Val::Float(f(x, number(&y)?))));
    box_once(r.map_err(Exn::from))
}

macro_rules! unary {
    ($name: literal, $f: expr) => {
        ($name, v(0), |_, cv| one(&cv.1, $f))
    };
}

macro_rules! binary {
    ($name: literal, $f: expr) => {
        ($name, v(2), |_, cv| two(cv, $f))
    };
}

/// The math natives.
pub fn natives() -> Vec<Filter<Native<Val>>> {
    let list: Vec<Filter<RunPtr<Val>>> = vec![
        ("floor", v(0), |_, cv| whole(&cv.1, f64::floor)),
        ("ceil", v(0), |_, cv| whole(&cv.1, f64::ceil)),
        ("round", v(0), |_, cv| whole(&cv.1, f64::round)),
        unary!("sqrt", f64::sqrt),
        unary!("log", f64::ln),
        unary!("log2", f64::log2),
        unary!("log10", f64::log10),
        unary!("log1p", f64::ln_1p),
        unary!("exp", f64::exp),
        unary!("exp2", f64::exp2),
        unary!("exp10", |x| 10f64.powf(x)),
        unary!("expm1", f64::exp_m1),
        unary!("fabs", f64::abs),
        unary!("cbrt", f64::cbrt),
        unary!("trunc", f64::trunc),
        unary!("rint", f64::round_ties_even),
        unary!("nearbyint", f64::round_ties_even),
        unary!("significand", |x| {
            if x == 0.0 || !x.is_finite() {
                x
            } else {
                x / 2f64.powi(x.abs().log2().floor() as i32)
            }
        }),
        unary!("logb", |x| x.abs().log2().floor()),
        unary!("sin", f64::sin),
        unary!("cos", f64::cos),
        unary!("tan", f64::tan),
        unary!("asin", f64::asin),
        unary!("acos", f64::acos),
        unary!("atan", f64::atan),
        unary!("sinh", f64::sinh),
        unary!("cosh", f64::cosh),
        unary!("tanh", f64::tanh),
        unary!("asinh", f64::asinh),
        unary!("acosh", f64::acosh),
        unary!("atanh", f64::atanh),
        binary!("pow", f64::powf),
        binary!("atan2", f64::atan2),
        binary!("fmin", f64::min),
        binary!("fmax", f64::max),
        binary!("fmod", |x, y| x % y),
        binary!("hypot", f64::hypot),
        binary!("copysign", f64::copysign),
        binary!("ldexp", |x, e| x * 2f64.powi(e as i32)),
        binary!("scalb", |x, e| x * 2f64.powf(e)),
        binary!("scalbln", |x, e| x * 2f64.powi(e as i32)),
        binary!("drem", |x, y| x - y * (x / y).round_ties_even()),
    ];
    list.into_iter().map(run).collect()
}
