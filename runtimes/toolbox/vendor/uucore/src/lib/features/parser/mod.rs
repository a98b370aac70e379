// This file is part of the uutils coreutils package.
//
// For the full copyright and license information, please view the LICENSE
// file that was distributed with this source code.

// spell-checker:ignore extendedbigdecimal

#[cfg(any(feature = "parser", feature = "parser-num"))]
pub mod num_parser;
#[cfg(any(feature = "parser", feature = "parser-size"))]
pub mod parse_block_size;
#[cfg(any(feature = "parser", feature = "parser-glob"))]
pub mod parse_glob;
#[cfg(any(feature = "parser", feature = "parser-size"))]
pub mod parse_signed_num;
#[cfg(any(feature = "parser", feature = "parser-size"))]
pub mod parse_size;
#[cfg(any(feature = "parser", feature = "parser-num"))]
pub mod parse_time;
#[cfg(any(feature = "parser", feature = "parser-num"))]
pub mod shortcut_value_parser;
