//! jq 1.6's dates, in UTC (the sandbox's only zone): `gmtime` and `localtime` (epoch seconds
//! to "broken down time" arrays), `mktime`, `strftime`/`strflocaltime`, `strptime`, `now`;
//! `todate`, `fromdate` and `date` are definitions on them (`defs.jq`).

use chrono::{DateTime, Datelike, NaiveDate, NaiveDateTime, Timelike, Utc};
use jaq_core::box_iter::box_once;
use jaq_core::{Error, Exn, Native, RunPtr, ValXs};
use jaq_std::{Filter, run, v};

use super::print::as_f64;
use super::value::Val;

fn fail(msg: &str) -> Error<Val> {
    Error::new(Val::from(msg.to_owned()))
}

fn once<'a>(r: Result<Val, Error<Val>>) -> ValXs<'a, Val> {
    box_once(r.map_err(Exn::from))
}

/// `[year, month (0-11), day, hours, minutes, seconds, weekday, day of the year (0-365)]`.
fn broken_down(dt: DateTime<Utc>, seconds: f64) -> Val {
    [
        Val::Int(dt.year() as isize),
        Val::Int(dt.month0() as isize),
        Val::Int(dt.day() as isize),
        Val::Int(dt.hour() as isize),
        Val::Int(dt.minute() as isize),
        Val::Float(seconds),
        Val::Int(dt.weekday().num_days_from_sunday() as isize),
        Val::Int(dt.ordinal0() as isize),
    ]
    .into_iter()
    .collect()
}

fn from_epoch(v: &Val, name: &str) -> Result<(DateTime<Utc>, f64), Error<Val>> {
    let secs = as_f64(v).ok_or_else(|| fail(&format!("{name}() requires a number")))?;
    let dt = DateTime::from_timestamp(secs.floor() as i64, 0)
        .ok_or_else(|| fail(&format!("{name}() out of range")))?;
    Ok((dt, secs - secs.floor() + f64::from(dt.second())))
}

fn from_broken_down(v: &Val, name: &str) -> Result<DateTime<Utc>, Error<Val>> {
    let err = || fail(&format!("{name} requires array of 6 numbers"));
    let Val::Arr(a) = v else {
        return Err(err());
    };
    let n = |i: usize| a.get(i).and_then(as_f64).ok_or_else(err);
    let date = NaiveDate::from_ymd_opt(n(0)? as i32, 1, 1).ok_or_else(err)?;
    // Months and days past their ends roll over, as timegm does.
    let date = date
        .checked_add_months(chrono::Months::new(n(1)?.max(0.0) as u32))
        .ok_or_else(err)?
        + chrono::Duration::days(n(2)? as i64 - 1);
    let secs = n(3)? as i64 * 3600 + n(4)? as i64 * 60 + n(5)?.floor() as i64;
    Ok(date.and_hms_opt(0, 0, 0).ok_or_else(err)?.and_utc() + chrono::Duration::seconds(secs))
}

fn datetime(v: &Val, name: &str) -> Result<DateTime<Utc>, Error<Val>> {
    match v {
        Val::Arr(_) => from_broken_down(v, name),
        v if as_f64(v).is_some() => Ok(from_epoch(v, name)?.0),
        _ => Err(fail(&format!("{name}/1 requires parsed datetime inputs"))),
    }
}

fn strptime(s: &str, fmt: &str) -> Option<DateTime<Utc>> {
    if let Ok(dt) = DateTime::parse_from_str(s, fmt) {
        return Some(dt.with_timezone(&Utc));
    }
    if let Ok(dt) = NaiveDateTime::parse_from_str(s, fmt) {
        return Some(dt.and_utc());
    }
    let date = NaiveDate::parse_from_str(s, fmt).ok()?;
    Some(date.and_hms_opt(0, 0, 0)?.and_utc())
}

/// The date natives.
pub fn natives() -> Vec<Filter<Native<Val>>> {
    let list: Vec<Filter<RunPtr<Val>>> = vec![
        ("now", v(0), |_, _| {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64());
            once(Ok(Val::Float(now)))
        }),
        ("gmtime", v(0), |_, cv| {
            once(from_epoch(&cv.1, "gmtime").map(|(dt, s)| broken_down(dt, s)))
        }),
        ("localtime", v(0), |_, cv| {
            once(from_epoch(&cv.1, "localtime").map(|(dt, s)| broken_down(dt, s)))
        }),
        ("mktime", v(0), |_, cv| {
            if !matches!(cv.1, Val::Arr(_)) {
                return once(Err(fail("mktime requires array of 6 numbers")));
            }
            once(from_broken_down(&cv.1, "mktime").map(|dt| Val::Int(dt.timestamp() as isize)))
        }),
        ("strftime", v(1), |_, mut cv| {
            let fmt = cv.0.pop_var();
            let Val::Str(fmt) = fmt else {
                return once(Err(fail("strftime/1 requires a string format")));
            };
            once(datetime(&cv.1, "strftime").map(|dt| Val::from(dt.format(&fmt).to_string())))
        }),
        ("strflocaltime", v(1), |_, mut cv| {
            let fmt = cv.0.pop_var();
            let Val::Str(fmt) = fmt else {
                return once(Err(fail("strflocaltime/1 requires a string format")));
            };
            let dt = datetime(&cv.1, "strflocaltime");
            once(dt.map(|dt| Val::from(dt.format(&fmt).to_string())))
        }),
        ("strptime", v(1), |_, mut cv| {
            let fmt = cv.0.pop_var();
            let (Val::Str(s), Val::Str(fmt)) = (&cv.1, &fmt) else {
                return once(Err(fail("strptime/1 requires string inputs and arguments")));
            };
            once(match strptime(s, fmt) {
                Some(dt) => Ok(broken_down(dt, f64::from(dt.second()))),
                None => Err(fail(&format!(
                    "date \"{s}\" does not match format \"{fmt}\""
                ))),
            })
        }),
    ];
    list.into_iter().map(run).collect()
}
