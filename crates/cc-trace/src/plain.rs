//! The fast way through a row's fields, checked against the `csv` crate's deserializer.

use serde::de::value::BorrowedBytesDeserializer;
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// A row read field by field, the header's names as keys (as the `csv` crate reads a row
/// with headers), for the plain case only: whole numbers of digits alone, text, and empty
/// optional fields. Anything else (a sign, an empty number, a float, an enum, a missing
/// field…) gives up, and the row is read again by `csv`'s deserializer, whose value or
/// message is the rule; where this succeeds, `csv` gives the same value
/// (`plain_rows_read_as_the_csv_crate_reads_them`). It saves `csv`'s per-field error
/// bookkeeping and `str::parse`'s sign and overflow checks on every row.
pub(crate) struct Plain<'a> {
    header_row: &'a csv::StringRecord,
    header: csv::StringRecordIter<'a>,
    fields: std::iter::Peekable<csv::StringRecordIter<'a>>,
    in_order: &'a InOrder,
}

/// Whether the header row names a struct's fields in their order, for the last struct
/// asked about (its field list's address and length: the same address and length are the
/// same names). Then its fields are read in order instead of by name, with the same result.
pub(crate) type InOrder = std::cell::Cell<Option<(usize, usize, bool)>>;

impl<'a> Plain<'a> {
    pub(crate) fn new(
        header: &'a csv::StringRecord,
        record: &'a csv::StringRecord,
        in_order: &'a InOrder,
    ) -> Self {
        Self {
            header_row: header,
            header: header.iter(),
            fields: record.iter().peekable(),
            in_order,
        }
    }

    fn in_order(&self, names: &'static [&'static str]) -> bool {
        let key = (names.as_ptr() as usize, names.len());
        match self.in_order.get() {
            Some((p, n, yes)) if (p, n) == key => yes,
            _ => {
                let yes = self.header_row.iter().eq(names.iter().copied());
                self.in_order.set(Some((key.0, key.1, yes)));
                yes
            }
        }
    }

    fn field(&mut self) -> Result<&'a str, GiveUp> {
        self.fields.next().ok_or(GiveUp)
    }

    /// Digits only, at most 19 (below 2^64, so the sum cannot overflow), fitting `T`.
    fn number<T: TryFrom<u64>>(&mut self) -> Result<T, GiveUp> {
        let f = self.field()?;
        if f.is_empty() || f.len() > 19 {
            return Err(GiveUp);
        }
        let mut v = 0u64;
        for b in f.bytes() {
            let d = b.wrapping_sub(b'0');
            if d > 9 {
                return Err(GiveUp);
            }
            v = v * 10 + u64::from(d);
        }
        T::try_from(v).map_err(|_| GiveUp)
    }
}

/// Not the plain case: read the row with `csv`'s deserializer instead.
#[derive(Debug)]
pub(crate) struct GiveUp;

impl fmt::Display for GiveUp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not a plain row")
    }
}

impl std::error::Error for GiveUp {}

impl de::Error for GiveUp {
    fn custom<T: fmt::Display>(_: T) -> Self {
        GiveUp
    }
}

impl<'de> de::Deserializer<'de> for &mut Plain<'de> {
    type Error = GiveUp;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, GiveUp> {
        Err(GiveUp)
    }

    fn deserialize_u8<V: Visitor<'de>>(self, v: V) -> Result<V::Value, GiveUp> {
        v.visit_u8(self.number()?)
    }

    fn deserialize_u16<V: Visitor<'de>>(self, v: V) -> Result<V::Value, GiveUp> {
        v.visit_u16(self.number()?)
    }

    fn deserialize_u32<V: Visitor<'de>>(self, v: V) -> Result<V::Value, GiveUp> {
        v.visit_u32(self.number()?)
    }

    fn deserialize_u64<V: Visitor<'de>>(self, v: V) -> Result<V::Value, GiveUp> {
        v.visit_u64(self.number()?)
    }

    fn deserialize_str<V: Visitor<'de>>(self, v: V) -> Result<V::Value, GiveUp> {
        v.visit_borrowed_str(self.field()?)
    }

    fn deserialize_string<V: Visitor<'de>>(self, v: V) -> Result<V::Value, GiveUp> {
        v.visit_str(self.field()?)
    }

    /// As `csv`: no field left or an empty one is `None`.
    fn deserialize_option<V: Visitor<'de>>(self, v: V) -> Result<V::Value, GiveUp> {
        match self.fields.peek() {
            None => v.visit_none(),
            Some(&"") => {
                self.fields.next();
                v.visit_none()
            }
            Some(_) => v.visit_some(self),
        }
    }

    /// As `csv` with a header row: a map from the header's names to the fields; read in
    /// order when the header names the fields in order.
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        names: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, GiveUp> {
        if self.in_order(names) {
            v.visit_seq(self)
        } else {
            v.visit_map(self)
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u128 f32 f64 char bytes byte_buf unit unit_struct
        newtype_struct seq tuple tuple_struct map enum identifier ignored_any
    }
}

impl<'de> SeqAccess<'de> for &mut Plain<'de> {
    type Error = GiveUp;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, GiveUp> {
        if self.fields.peek().is_none() {
            return Ok(None);
        }
        seed.deserialize(&mut **self).map(Some)
    }
}

impl<'de> MapAccess<'de> for &mut Plain<'de> {
    type Error = GiveUp;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, GiveUp> {
        match self.header.next() {
            None => Ok(None),
            Some(h) => seed
                .deserialize(BorrowedBytesDeserializer::new(h.as_bytes()))
                .map(Some),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, GiveUp> {
        seed.deserialize(&mut **self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Row {
        a: u64,
        b: i64,
    }

    /// Rows with the fields of every kind and of the tests here (text, optional numbers, signed).
    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Mixed {
        n8: u8,
        s: String,
        o32: Option<u32>,
        i: i64,
    }

    /// Where the plain reading of a row succeeds, the `csv` crate's deserializer gives the same
    /// value (where it gives up, `csv`'s result is used as it is): every combination of field
    /// values (digits, overflow at each width, signs, floats, text, empty, non-ASCII digits) for
    /// every kind's row, a row of mixed fields, a header in another order, with an extra column
    /// and with a missing one.
    #[test]
    fn plain_rows_read_as_the_csv_crate_reads_them() {
        const VALUES: [&str; 16] = [
            "",
            "0",
            "0007",
            "255",
            "256",
            "4294967296",
            "9999999999999999999",
            "18446744073709551615",
            "18446744073709551616",
            "+5",
            "-5",
            "5.0",
            "1e3",
            "enqueue",
            "\u{663}",
            "ab",
        ];
        fn check<T: serde::de::DeserializeOwned + fmt::Debug>(header: &str) -> usize {
            let header = csv::StringRecord::from(header.split(',').collect::<Vec<_>>());
            let n = header.len();
            let mut plain_ok = 0;
            for k in 0..VALUES.len().pow(n as u32) {
                let mut rest = k;
                let rec = csv::StringRecord::from(
                    (0..n)
                        .map(|_| {
                            let v = VALUES[rest % VALUES.len()];
                            rest /= VALUES.len();
                            v
                        })
                        .collect::<Vec<_>>(),
                );
                let in_order = InOrder::default();
                if let Ok(v) = T::deserialize(&mut Plain::new(&header, &rec, &in_order)) {
                    plain_ok += 1;
                    let by_csv = rec.deserialize::<T>(Some(&header));
                    assert_eq!(
                        format!("{:?}", by_csv.as_ref().ok()),
                        format!("{:?}", Some(&v)),
                        "{header:?} {rec:?}"
                    );
                }
            }
            plain_ok
        }
        assert!(check::<crate::timely::Row>(crate::timely::HEADER) > 0);
        assert!(check::<crate::hpcc::Row>(crate::hpcc::HEADER) > 0);
        assert!(check::<crate::cats::Row>(crate::cats::HEADER) > 0);
        assert!(check::<crate::pacer::Row>(crate::pacer::HEADER) > 0);
        assert!(check::<Mixed>("n8,s,o32,i") == 0); // i64 is never plain
        assert!(check::<Row>("b,a") == 0);
        assert!(check::<crate::timely::Row>("bytes,t_complete_ns,t_send_ns") > 0);
        assert!(check::<crate::timely::Row>("t_send_ns,t_complete_ns,bytes,x") == 0);
        assert!(check::<crate::cats::Row>("t_ns,event,prio") > 0);
        check::<crate::timely::Row>("t_send_ns,t_complete_ns");
    }
}
