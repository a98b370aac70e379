# jq 1.6's definitions where jaq's differ, on top of jaq-std's and jaq-json's (a later
# definition hides an earlier one of the same name and arity). Natives named _jq_* are in
# funs.rs, math.rs and time.rs.

def tostring: _jq_tostring;
def tojson: _jq_tojson;
def @text: _jq_tostring;
def @json: _jq_tojson;
def @html: _jq_format("html");
def @uri: _jq_format("uri");
def @csv: _jq_format("csv");
def @tsv: _jq_format("tsv");
def @sh: _jq_format("sh");
def @base64: _jq_format("base64");
def @base64d: _jq_format("base64d");
def @base32: error("base32 is not a valid format");
def @base32d: error("base32d is not a valid format");

def debug: _jq_debug;
def infinite: _jq_infinite;
def nan: _jq_nan;
def isnan: type == "number" and _jq_isnan;
def isinfinite: type == "number" and (. == infinite or . == -infinite);
def isnormal: type == "number" and ((. == 0 or isnan or isinfinite) | not);
def stderr: _jq_stderr;
def halt_error: halt_error(5);
def input: [limit(1; inputs)] | if length == 0 then error("No more inputs") else .[0] end;

def _std_limit($n; f): limit($n; f);
def limit($n; f): if $n < 0 then f elif $n == 0 then first(f) else _std_limit($n; f) end;

def join($x): reduce .[] as $i (null;
    (if . == null then "" else . + $x end) +
    ($i | if type == "boolean" or type == "number" then tojson elif . == null then "" else . end)
  ) // "";

def _std_ltrimstr($x): ltrimstr($x);
def _std_rtrimstr($x): rtrimstr($x);
def ltrimstr($x): if type == "string" and ($x | type) == "string" then _std_ltrimstr($x) else . end;
def rtrimstr($x): if type == "string" and ($x | type) == "string" then _std_rtrimstr($x) else . end;

def from_entries: map({(.key | if type == "string" then . else error("Cannot use " + type + " (" + tojson + ") as object key") end): .value}) | add + {} // {};
def with_entries(f): to_entries | map(f) | from_entries;

def todate: strftime("%Y-%m-%dT%H:%M:%SZ");
def todateiso8601: todate;
def fromdateiso8601: strptime("%Y-%m-%dT%H:%M:%SZ") | mktime;
def fromdate: fromdateiso8601;
def env: $ENV;
def halt_error: halt_error(5);
def dateadd(u; n): . + n;
def datesub(u; n): . - n;
def date: todate;

# Regular expressions (Oniguruma's flags: g i x n s l p).
def match(re; mode): _jq_match(re; mode; false) | .[];
def test(re; mode): _jq_match(re; mode; true);
def test($val): . as $in | ($val | if type == "string" then [., null] elif type == "array" then [.[0], .[1]] else error((type) + " not a string or array") end) as [$re, $flags] | $in | test($re; $flags);
def match($val): . as $in | ($val | if type == "string" then [., null] elif type == "array" then [.[0], .[1]] else error((type) + " not a string or array") end) as [$re, $flags] | $in | match($re; $flags);
def _jq_capture_object: reduce (.captures | .[] | select(.name != null) | {key: .name, value: .string}) as $pair ({}; . + {($pair.key): $pair.value});
def capture(re; mods): match(re; mods) | _jq_capture_object;
def capture($val): . as $in | ($val | if type == "string" then [., null] elif type == "array" then [.[0], .[1]] else error((type) + " not a string or array") end) as [$re, $flags] | $in | capture($re; $flags);
def scan(re; $flags): match(re; "g" + ($flags // ""))
  | if (.captures | length) > 0 then [.captures | .[] | .string] else .string end;
def scan(re): scan(re; null);
def splits($re; flags): . as $s
  | [match($re; "g" + (flags // "")) | (.offset, .offset + .length)] as $ms
  | [0] + $ms + [$s | length]
  | range(0; length; 2) as $i
  | $s[.[$i]:.[$i + 1]];
def splits($re): splits($re; null);
def split($re; flags): [splits($re; flags)];
def sub($re; str; $flags): . as $in
  | [match($re; $flags)] as $edits
  | if ($edits | length) == 0 then $in else
    reduce $edits[] as $edit ({result: "", previous: 0};
      ($in[.previous: $edit.offset]) as $gap
      | ($edit | _jq_capture_object | str) as $insert
      | .result += $gap + $insert
      | .previous = ($edit.offset + $edit.length))
    | .result + $in[.previous:]
    end;
def sub($re; str): sub($re; str; "");
def gsub($re; str; $flags): sub($re; str; $flags + "g");
def gsub($re; str): sub($re; str; "g");
def ascii_downcase: if type == "string" then explode | map(if 65 <= . and . <= 90 then . + 32 end) | implode else error("explode input must be a string") end;
def ascii_upcase: if type == "string" then explode | map(if 97 <= . and . <= 122 then . - 32 end) | implode else error("explode input must be a string") end;

def leaf_paths: paths(scalars);
def tostream: _jq_tostream[];
def fromstream(f): {x: null, e: false} as $init
  | foreach f as $i ($init;
      if .e then $init else . end
      | if $i | length == 2
        then setpath(["e"]; $i[0] | length == 0) | setpath(["x"] + $i[0]; $i[1])
        else setpath(["e"]; $i[0] | length == 1) end;
      if .e then .x else empty end);
def truncate_stream(stream): . as $n | null | stream | . as $input
  | if (.[0] | length) > $n then setpath([0]; .[0][$n:]) else empty end;
def combinations: if length == 0 then [] else .[0][] as $x | (.[1:] | combinations) as $w | [$x] + $w end;
def combinations(n): . as $dot | [range(n)] | map($dot) | combinations;
def in(xs): . as $x | xs | has($x);
def inside(xs): . as $x | xs | contains($x);
def IN(s): any(s == .; .);
def IN(src; s): any(src == s; .);
def INDEX(stream; idx_expr): reduce stream as $row ({}; .[$row | idx_expr | tostring] |= $row);
def INDEX(idx_expr): INDEX(.[]; idx_expr);
