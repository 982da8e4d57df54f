import SyntheticHistory

/// The generator's random numbers, so tests and generated folders share one definition.
package typealias SplitMix64 = SyntheticHistory.SplitMix64
