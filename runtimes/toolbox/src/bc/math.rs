//! `bc -l`'s functions: s (sine), c (cosine), a (arctangent), l (natural logarithm), e
//! (exponential) and j (Bessel), computed step by step as GNU bc's library does them (the same
//! series, the same working scales, the same truncations), so that their last digits are GNU's.
//! A function the program defines with one of these names replaces it.

use super::num::Num;

type R = Result<Num, &'static str>;

/// How many arguments a library function takes; `None` for a name that is not one.
pub fn arity(name: &str) -> Option<usize> {
    match name {
        "s" | "c" | "a" | "l" | "e" => Some(1),
        "j" => Some(2),
        _ => None,
    }
}

pub fn call(name: &str, args: &[Num], scale: usize) -> R {
    match name {
        "s" => sin(&args[0], scale),
        "c" => cos(&args[0], scale),
        "a" => atan(&args[0], scale),
        "l" => ln(&args[0], scale),
        "e" => exp(&args[0], scale),
        _ => bessel(&args[0], &args[1], scale),
    }
}

fn n(text: &str) -> Num {
    Num::parse(text, 10)
}

fn int(i: i64) -> Num {
    Num::int(i)
}

fn mul(a: &Num, b: &Num, scale: usize) -> R {
    a.mul(b, scale)
}

fn div(a: &Num, b: &Num, scale: usize) -> R {
    a.div(b, scale)?.ok_or("Divide by zero")
}

/// A scale computed as a number: its integer part, as bc's `scale = ...` takes it.
fn as_scale(v: &Num) -> usize {
    v.to_i64().unwrap_or(0).max(0) as usize
}

/// e^x: halve x until it is at most 1, sum the series, square back.
fn exp(x: &Num, z: usize) -> R {
    let negative = x.is_neg();
    let mut x = x.abs();
    let work = as_scale(&int(6 + z as i64).add(&mul(&n(".44"), &x, z)?));
    let mut s = x.scale + 1;
    let mut halvings = 0;
    while x.cmp(&int(1)).is_gt() {
        halvings += 1;
        x = div(&x, &int(2), s)?;
        s += 1;
    }
    let s = work;
    let mut sum = int(1).add(&x);
    let mut power = x.clone();
    let mut fact = int(1);
    let mut i = 2;
    loop {
        power = mul(&power, &x, s)?;
        fact = mul(&fact, &int(i), s)?;
        let term = div(&power, &fact, s)?;
        if term.is_zero() {
            for _ in 0..halvings {
                sum = mul(&sum, &sum, s)?;
            }
            return if negative {
                div(&int(1), &sum, z)
            } else {
                div(&sum, &int(1), z)
            };
        }
        sum = sum.add(&term);
        i += 1;
    }
}

/// ln x: square roots bring x near 1, then the series of atanh((x-1)/(x+1)).
fn ln(x: &Num, z: usize) -> R {
    if x.is_neg() || x.is_zero() {
        // GNU's answer for no logarithm: (1 - 10^scale) / 1.
        let big = int(10).pow(z as i64, z)?;
        return div(&int(1).sub(&big), &int(1), z);
    }
    let s = z + 6;
    let mut factor = int(2);
    let mut x = x.clone();
    let root = |x: &Num| -> R { x.sqrt(s)?.ok_or("Square root of a negative number") };
    while x.cmp(&int(2)).is_ge() {
        factor = mul(&factor, &int(2), s)?;
        x = root(&x)?;
    }
    while x.cmp(&n(".5")).is_le() {
        factor = mul(&factor, &int(2), s)?;
        x = root(&x)?;
    }
    let mut q = div(&x.sub(&int(1)), &x.add(&int(1)), s)?;
    let mut sum = q.clone();
    let q2 = mul(&q, &q, s)?;
    let mut i = 3;
    loop {
        q = mul(&q, &q2, s)?;
        let term = div(&q, &int(i), s)?;
        if term.is_zero() {
            let v = mul(&factor, &sum, s)?;
            return div(&v, &int(1), z);
        }
        sum = sum.add(&term);
        i += 2;
    }
}

/// sin x: x reduced by multiples of pi/2 (from a(1)), then the Taylor series.
fn sin(x: &Num, z: usize) -> R {
    let s = as_scale(&mul(&n("1.1"), &int(z as i64), z)?.add(&int(2)));
    let quarter = atan(&int(1), s)?;
    let negative = x.is_neg();
    let mut x = x.abs();
    let k = div(&div(&x, &quarter, 0)?.add(&int(2)), &int(4), 0)?;
    x = x.sub(&mul(&mul(&int(4), &k, 0)?, &quarter, 0)?);
    if !k.rem(&int(2), 0)?.unwrap_or_default().is_zero() {
        x = x.neg();
    }
    let s = z + 2;
    let mut sum = x.clone();
    let mut term = x.clone();
    let minus_x2 = mul(&x.neg(), &x, s)?;
    let mut i: i64 = 3;
    loop {
        term = mul(&term, &div(&minus_x2, &int(i * (i - 1)), s)?, s)?;
        if term.is_zero() {
            let v = if negative { sum.neg() } else { sum };
            return div(&v, &int(1), z);
        }
        sum = sum.add(&term);
        i += 2;
    }
}

/// cos x = sin(x + pi/2), with a fifth more places.
fn cos(x: &Num, z: usize) -> R {
    let s = as_scale(&mul(&int(z as i64), &n("1.2"), z)?);
    let half_pi = mul(&atan(&int(1), s)?, &int(2), s)?;
    let v = sin(&x.add(&half_pi), s)?;
    div(&v, &int(1), z)
}

/// atan x: known values of a(1) and a(.2), x brought below .2 with
/// atan x = atan .2 + atan((x - .2) / (1 + .2x)), then the series.
fn atan(x: &Num, z: usize) -> R {
    let sign = if x.is_neg() { int(-1) } else { int(1) };
    let mut x = x.abs();
    let known = |digits: &'static str| -> Option<&'static str> {
        let places = if z <= 25 {
            25
        } else if z <= 40 {
            40
        } else if z <= 60 {
            60
        } else {
            return None;
        };
        Some(&digits[..places + 1])
    };
    const QUARTER_PI: &str = ".785398163397448309615660845819875721049292349843776455243736";
    const ATAN_FIFTH: &str = ".197395559849880758370049765194790293447585103787852101517688";
    let fifth = n(".2");
    for (at, digits) in [(int(1), QUARTER_PI), (fifth.clone(), ATAN_FIFTH)] {
        if x.cmp(&at).is_eq()
            && let Some(v) = known(digits)
        {
            return div(&n(v), &sign, z);
        }
    }
    let base = if x.cmp(&fifth).is_gt() {
        atan(&fifth, z + 5)?
    } else {
        Num::zero()
    };
    let s = z + 3;
    let mut steps = 0;
    while x.cmp(&fifth).is_gt() {
        steps += 1;
        x = div(&x.sub(&fifth), &int(1).add(&mul(&x, &fifth, s)?), s)?;
    }
    let mut sum = x.clone();
    let mut power = x.clone();
    let minus_x2 = mul(&x.neg(), &x, s)?;
    let mut i = 3;
    loop {
        power = mul(&power, &minus_x2, s)?;
        let term = div(&power, &int(i), s)?;
        if term.is_zero() {
            let v = mul(&int(steps), &base, z)?.add(&sum);
            return div(&v, &sign, z);
        }
        sum = sum.add(&term);
        i += 2;
    }
}

/// The Bessel function of the first kind of integer order n: x^n / (2^n n!) times the series.
fn bessel(order: &Num, x: &Num, z: usize) -> R {
    let mut order = div(order, &int(1), 0)?;
    let mut negate = false;
    if order.is_neg() {
        order = order.neg();
        negate = order
            .rem(&int(2), 0)?
            .unwrap_or_default()
            .cmp(&int(1))
            .is_eq();
    }
    let Some(k) = order.to_i64() else {
        return Err("exponent too large in raise");
    };
    let mut fact = int(1);
    for i in 2..=k {
        fact = mul(&fact, &int(i), 0)?;
    }
    let s = as_scale(&mul(&n("1.5"), &int(z as i64), 0)?);
    let f = div(&div(&x.pow(k, s)?, &int(2).pow(k, s)?, s)?, &fact, s)?;
    let mut sum = int(1);
    let mut term = int(1);
    let quarter_x2 = div(&mul(&x.neg(), x, s)?, &int(4), s)?;
    let s = as_scale(
        &mul(&n("1.5"), &int(z as i64), s)?
            .add(&int(f.length() as i64))
            .sub(&int(f.scale as i64)),
    );
    let mut i = 1;
    loop {
        term = div(
            &div(&mul(&term, &quarter_x2, s)?, &int(i), s)?,
            &order.add(&int(i)),
            s,
        )?;
        if term.is_zero() {
            let f = if negate { f.neg() } else { f };
            return div(&mul(&f, &sum, z)?, &int(1), z);
        }
        sum = sum.add(&term);
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at20(f: fn(&Num, usize) -> R, x: &str) -> String {
        f(&n(x), 20).unwrap().format(10)
    }

    #[test]
    fn gnu_digits() {
        assert_eq!(at20(exp, "1"), "2.71828182845904523536");
        assert_eq!(at20(ln, "2"), ".69314718055994530941");
        assert_eq!(at20(sin, "1"), ".84147098480789650665");
        assert_eq!(at20(cos, "1"), ".54030230586813971740");
        assert_eq!(at20(atan, "1"), ".78539816339744830961");
        assert_eq!(
            atan(&n("3").neg(), 20).unwrap().format(10),
            "-1.24904577239825442582"
        );
        assert_eq!(at20(ln, "0"), "-99999999999999999999.00000000000000000000");
        assert_eq!(
            bessel(&n("1"), &n("2"), 20).unwrap().format(10),
            ".57672480775687338720"
        );
    }
}
