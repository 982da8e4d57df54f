import Foundation
import JSONDocument
import EventCodecs
import MergeEngine
import CloudFolder
import FileWrappers

/// What a conversion wrote (Spec/convert.md).
public struct ConversionReport: Sendable {
    /// Each file read and the file it became; paths as given joined with the path inside them.
    public var files: [(source: String, destination: String, events: Int)]
    /// Attribute values moved into data files.
    public var movedToDataFiles: Int
    /// Entries of the source that were not converted (debris), with the reason.
    public var skipped: [(path: String, reason: String)]
    public var notes: [String]
}

extension Ensemble {
    /// The encodings a conversion can write.
    public enum Format: String, Sendable, CaseIterable {
        /// Canonical v2 JSON (Spec/v2-json.md).
        case v2JSON
        /// Canonical v2 binary (Spec/v2-binary.md).
        case v2Binary
        /// The 1.x-style dialect (Spec/v1-json.md); needs the model.
        case v1JSON
    }

    /// Converts the first input (an event file, a v1 log or a cloud folder) into `destination`,
    /// which must not exist unless `replacing`; everything is written under a temporary name,
    /// read back and compared, then renamed into place, and a conversion that would lose
    /// information is refused (Spec/convert.md). `wrapping` puts every written file in
    /// Ensembles 2's wrappers (Spec/wrappers.md 8); the read-back uses its password.
    public func convert(
        to destination: String, format: Format = .v2JSON, blobContainers: Bool = false,
        wrapping: Wrapping = .plain, replacing: Bool = false
    ) throws(EnsembleError) -> ConversionReport {
        let source = try firstInput()
        var converter = Converter(reader: try reader(), target: format == .v1JSON ? .v1 : .v2, binary: format == .v2Binary)
        converter.blobContainers = blobContainers
        converter.wrapping = wrapping
        do {
            let summary = try converter.convert(source: source, destination: destination, replacing: replacing)
            return ConversionReport(
                files: summary.files.map { ($0.source, $0.destination, $0.events) }, movedToDataFiles: summary.movedToDataFiles,
                skipped: summary.skipped, notes: summary.notes)
        } catch {
            var failure = EnsembleError(kind: error.usage ? .usage : .unreadable, problems: error.errors.map(IntegrityProblem.init(readError:)))
            failure.readErrors = error.errors
            throw failure
        }
    }
}
