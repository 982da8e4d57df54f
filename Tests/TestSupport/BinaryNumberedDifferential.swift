import JSONDocument
import EnsembleModel
import EventCodecs

/// The binary decoder's numbered-only reading (a merge's: the string table read as bytes into
/// the numbered form, no `String` per string) against its whole-event readings of the same file,
/// and the numbered form written back against the event written back.
package enum BinaryNumberedDifferential {
    /// What differs between the readings of `bytes`, or nil. A file that `decodeReportingUnknowns`
    /// refuses, ``V2BinaryDecoder/decodeReportingUnknownsNumberedOnly(_:)`` and `decodeNumbered`
    /// refuse with the same error (code, message, offset, pointer); a file it reads, they read to
    /// the same header, unknown members and sections, and the same numbered form (string table
    /// byte for byte) as `decodeReportingUnknownsNumbered`, which numbers the event's `String`s;
    /// without unknown members, that form written back gives the bytes the event gives.
    package static func mismatch(_ bytes: [UInt8], decoder: V2BinaryDecoder = V2BinaryDecoder()) -> String? {
        let whole: DecodedBinaryEvent
        do throws(FormatError) {
            whole = try decoder.decodeReportingUnknowns(bytes)
        } catch {
            func refusal(_ read: () throws(FormatError) -> Void) -> FormatError? {
                do throws(FormatError) {
                    try read()
                    return nil
                } catch {
                    return error
                }
            }
            let numberedOnly = refusal { () throws(FormatError) in _ = try decoder.decodeReportingUnknownsNumberedOnly(bytes) }
            let numbered = refusal { () throws(FormatError) in _ = try decoder.decodeNumbered(bytes) }
            guard numberedOnly == error, numbered == error else {
                return "refused with \(error); numbered only: \(numberedOnly.map { "\($0)" } ?? "read"), numbered: \(numbered.map { "\($0)" } ?? "read")"
            }
            return nil
        }
        do throws(FormatError) {
            let numberedOnly = try decoder.decodeReportingUnknownsNumberedOnly(bytes)
            let both = try decoder.decodeReportingUnknownsNumbered(bytes)
            var header = whole.event
            header.objectChanges = []
            guard numberedOnly.event == header else { return "numbered only: header \(numberedOnly.event), not \(header)" }
            guard numberedOnly.unknownMembers == whole.unknownMembers, numberedOnly.unknownSectionOffsets == whole.unknownSectionOffsets else {
                return "numbered only: other unknown members or sections"
            }
            guard let numbered = numberedOnly.numbered, numbered == both.numbered else { return "numbered only: another numbered form" }
            guard try decoder.decodeNumbered(bytes) == numbered else { return "numbered: another numbered form" }
            guard numbered.resolved == NumberedEvent(whole.event).resolved else { return "numbered only: names other strings than the event" }
            // Written back from the numbered form (a rebase's binary baseline), the event gives
            // the bytes its strings give, or the same refusal.
            if whole.unknownMembers.isEmpty && whole.event.unknownFields.isEmpty {
                let fromStrings = Result { () throws(FormatError) in try V2BinaryEncoder().encode(whole.event) }
                let fromNumbers = Result { () throws(FormatError) in try V2BinaryEncoder().encode(header: header, numbered: numbered) }
                switch (fromStrings, fromNumbers) {
                case (.success(let a), .success(let b)) where a == b: break
                case (.failure(let a), .failure(let b)) where a.code == b.code: break
                default: return "written back from numbers: \(fromNumbers.map(\.count)) against \(fromStrings.map(\.count))"
                }
            }
        } catch {
            return "a file the whole reading reads is refused: \(error)"
        }
        return nil
    }
}
