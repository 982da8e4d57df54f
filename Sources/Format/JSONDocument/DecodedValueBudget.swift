/// How much one file may decode to, from its size as stored: its bytes on disk, before any
/// wrapper (zip, encryption) is removed (Spec/README.md 6.2).
///
/// The other limits bound what a file holds after unwrapping, which a zip layer lets be 100
/// times the stored size; a budget of decoded values per stored byte keeps what a reader builds
/// in memory within a small multiple of the file's size whatever the wrapping.
package struct DecodedValueBudget: Sendable, Hashable {
    /// Values per byte as stored. A JSON text holds at most one value per two bytes, so a plain
    /// JSON file is never refused; a real zipped event holds about 0.6 (Spec/README.md 6.2).
    package static let valuesPerStoredByte = 2
    /// The budget of a small file, whatever its size.
    package static let minimumValues = 65_536

    /// The file's size as stored.
    package var storedBytes: Int
    /// The most values it may decode to.
    package var maximumValues: Int

    /// The budget of a file of `storedBytes` bytes as stored.
    package init(storedBytes: Int) {
        self.storedBytes = storedBytes
        let scaled = max(0, storedBytes).multipliedReportingOverflow(by: Self.valuesPerStoredByte)
        maximumValues = max(Self.minimumValues, scaled.overflow ? Int.max : scaled.partialValue)
    }

    /// The message of an error for a file that decodes to more; `what` names the values counted.
    package func exceededMessage(_ what: String) -> String {
        "the file decodes to more than \(maximumValues) \(what), the limit for a file of \(storedBytes) bytes as stored "
            + "(\(Self.valuesPerStoredByte) per stored byte, at least \(Self.minimumValues); Spec/README.md 6.2)"
    }
}
