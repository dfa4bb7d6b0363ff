//! The NIC a pacer serves: its line rate and, optionally, hybrid pacing, validated and converted
//! to times per byte once.
//!
//! Everything here runs when the configuration is built (it may divide: it is not on the
//! per-event path). [`Config::new`] is a `const fn`, so a firmware image can build its
//! configuration at compile time.

use crate::rate::{Rate, time_per_byte_const};

/// The NIC: its line rate and, optionally, hybrid pacing. Built once (it divides).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Config {
    line_rate: Rate,
    pub(crate) line_tpb: u32,
    hw_rate: Rate,
    pub(crate) hw_tpb: u32,
    pub(crate) burst_bytes: u32,
}

/// A configuration that cannot be built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum ConfigError {
    /// The line rate is below [`Rate::MIN`].
    LineRate,
    /// The hybrid rate is below [`Rate::MIN`] or above the line rate.
    HybridRate,
    /// The burst size is not in `1 ..= 65 536` bytes.
    BurstBytes,
}

impl Config {
    /// A 100 Gb/s NIC without hybrid pacing.
    pub const DEFAULT: Config = Config::build(Rate::from_bps(100_000_000_000));

    const fn build(line_rate: Rate) -> Self {
        Self {
            line_rate,
            line_tpb: time_per_byte_const(line_rate),
            hw_rate: Rate::from_units(0),
            hw_tpb: 0,
            burst_bytes: 0,
        }
    }

    /// A NIC whose line carries `line_rate`.
    ///
    /// # Errors
    /// [`ConfigError::LineRate`] below [`Rate::MIN`].
    pub const fn new(line_rate: Rate) -> Result<Self, ConfigError> {
        if line_rate.units() < Rate::MIN.units() {
            return Err(ConfigError::LineRate);
        }
        Ok(Self::build(line_rate))
    }

    /// Adds hybrid pacing: hybrid flows' segments leave as bursts of `burst_bytes` at `hw_rate`.
    ///
    /// # Errors
    /// [`ConfigError::HybridRate`], [`ConfigError::BurstBytes`].
    pub const fn with_hybrid(self, hw_rate: Rate, burst_bytes: u32) -> Result<Self, ConfigError> {
        if hw_rate.units() < Rate::MIN.units() || hw_rate.units() > self.line_rate.units() {
            return Err(ConfigError::HybridRate);
        }
        if burst_bytes == 0 || burst_bytes > 65_536 {
            return Err(ConfigError::BurstBytes);
        }
        Ok(Self {
            hw_rate,
            hw_tpb: time_per_byte_const(hw_rate),
            burst_bytes,
            ..self
        })
    }

    /// The line rate.
    #[must_use]
    pub const fn line_rate(&self) -> Rate {
        self.line_rate
    }
    /// The line's time per byte (2^-22 ns).
    #[must_use]
    pub const fn line_tpb(&self) -> u32 {
        self.line_tpb
    }
    /// Hybrid pacing's rate and burst size, if configured.
    #[must_use]
    pub const fn hybrid(&self) -> Option<(Rate, u32)> {
        if self.hw_tpb == 0 {
            None
        } else {
            Some((self.hw_rate, self.burst_bytes))
        }
    }
}

impl Default for Config {
    fn default() -> Self {
        Self::DEFAULT
    }
}
