import Foundation
import JSONDocument
import EnsembleModel
import EventCodecs
import SchemaValidation
import DataModel
import ModelValidation
import FileWrappers
import FileInput

extension FormatError.Code {
    public static let fileUnreadable = Self("file.unreadable")
}

/// The encodings a reader tells apart by a file's first bytes.
package enum EventEncoding: String, Sendable, Hashable {
    case v2JSON = "v2-json"
    case v2Binary = "v2-binary"
    case v1JSON = "v1-json"
}

/// Reads one event file through the whole pipeline: bytes, JSON, schema, then decoding
/// (Spec/v2-json.md, "Reading"). Every failure is a ``FormatError`` attributed to the file.
package struct EventFileReader: Sendable {
    /// Limits for every file; trailing commas are governed by ``lenient`` instead.
    package var jsonOptions: JSONReadingOptions
    /// Accept the trailing commas of the original 1.x logs, in v1 files only.
    package var lenient: Bool
    /// Needed to read v1 files; when given, v2 events are validated against it too.
    package var model: DataModel?
    /// Removes Ensembles 2's zip and encryption layers before a file is read, with the password
    /// of encrypted folders (Spec/wrappers.md 5).
    package var unwrapper: Unwrapper
    /// Decode only, without the schema and model checks: for bytes this process has already
    /// read and checked (see ``readEvent(file:parts:digest:)``).
    var skipsChecks = false
    /// Whether a single file's object changes are given in numbered form only
    /// (``PartResult/numbered``), built as it is decoded, and checked against the model in that
    /// form; its part then holds no object changes: for a merge's replay and verify's objects
    /// step, which summarize the event from the numbered form
    /// (``SourcedEvent/init(header:changes:file:parts:)``). Binary files, and JSON files the fast
    /// decoder takes (``V2JSONFastDecoder``); others are decoded whole.
    package var numbersChanges = false
    /// Whether ``readPart(at:position:displayName:)`` takes a fingerprint of each file, which
    /// lets a second read of the same bytes skip the checks. Hashing every byte cost about 3%
    /// of a merge; a reader whose files are rarely read twice turns it off, and a second read
    /// then checks them again.
    package var fingerprints = true

    package init(jsonOptions: JSONReadingOptions = .strict, lenient: Bool = false, model: DataModel? = nil, password: PasswordSource? = nil) {
        self.jsonOptions = jsonOptions
        self.lenient = lenient
        self.model = model
        self.unwrapper = Unwrapper(password: password, maximumBytes: jsonOptions.maximumBytes)
    }

    /// The content of a file inside its wrappers, or the error that stops it being read: a
    /// `wrap.*` code, or `file.kind-*` for content no reader of the toolkit reads (Spec/wrappers.md
    /// 5, 6). Plain files pass through unchanged.
    package func unwrap(_ bytes: [UInt8], displayName: String) -> Result<Unwrapper.Unwrapped, FormatError> {
        do throws(FormatError) {
            var unwrapper = self.unwrapper
            unwrapper.maximumBytes = jsonOptions.maximumBytes
            let unwrapped = try unwrapper.unwrap(bytes)
            if let error = Unwrapper.kindError(unwrapped.kind, bytes: unwrapped.bytes, layers: unwrapped.layers) { throw error }
            return .success(unwrapped)
        } catch {
            return .failure(error.inFile(displayName))
        }
    }

    /// Every event of a loose file: one event, or all events of a v1 log.
    package struct FileResult: Sendable {
        package var encoding: EventEncoding?
        package var events: [Event]
        /// A v1 array of events.
        package var isLog: Bool
        package var unknownKeys: [JSONPointer]
        /// The byte offsets of a binary event's sections of unknown type (Spec/v2-binary.md 5.5).
        package var unknownSectionOffsets: [Int] = []
        package var errors: [FormatError]
        /// The wrappers removed before reading, outermost first (Spec/wrappers.md 5).
        package var layers: [WrapperLayer] = []
    }

    /// Reads a loose file: a v2 event, a v1 event or a v1 log. The path `-` is standard input.
    package func readFile(at url: URL, displayName: String) -> FileResult {
        readFile(FileReference(url), displayName: displayName)
    }

    /// ``readFile(at:displayName:)`` for a file of a folder, read through the folder's handle.
    package func readFile(_ file: FileReference, displayName: String) -> FileResult {
        let bytes: [UInt8]
        do {
            bytes =
                displayName == Self.standardInputName
                ? try Self.readStandardInput(limit: jsonOptions.maximumBytes)
                : try Self.readBytes(file, limit: jsonOptions.maximumBytes)
        } catch {
            return FileResult(encoding: nil, events: [], isLog: false, unknownKeys: [], errors: [error.inFile(displayName)])
        }
        switch unwrap(bytes, displayName: displayName) {
        case .failure(let error):
            return FileResult(encoding: nil, events: [], isLog: false, unknownKeys: [], errors: [error])
        case .success(let unwrapped):
            var result = budgeted(storedBytes: bytes.count).readUnwrapped(unwrapped.bytes, displayName: displayName)
            result.layers = unwrapped.layers
            return result
        }
    }

    /// This reader with the value budget of a file of `storedBytes` bytes on disk, which the
    /// decoders spend whatever wrappers were removed (Spec/README.md 6.2).
    private func budgeted(storedBytes: Int) -> EventFileReader {
        var reader = self
        reader.jsonOptions.valueBudget = DecodedValueBudget(storedBytes: storedBytes)
        return reader
    }

    private func readUnwrapped(_ bytes: [UInt8], displayName: String) -> FileResult {
        if V2Binary.isBinary(bytes) {
            let decoded = decodeBinary(bytes, displayName: displayName)
            var result = FileResult(
                encoding: .v2Binary, events: decoded.decoded.map { [$0.event] } ?? [], isLog: false,
                unknownKeys: decoded.decoded?.unknownMembers ?? [], errors: decoded.errors)
            result.unknownSectionOffsets = decoded.decoded?.unknownSectionOffsets ?? []
            return result
        }
        if let part = fastPart(bytes, position: .single), let event = try? V2JSONDecoder.join([part]) {
            return FileResult(encoding: .v2JSON, events: [event], isLog: false, unknownKeys: [], errors: [])
        }
        let parsed = parse(bytes)
        guard let json = parsed.json else {
            return FileResult(encoding: nil, events: [], isLog: false, unknownKeys: [], errors: parsed.errors.map { $0.inFile(displayName) })
        }
        guard Self.dialect(of: json) == .v1JSON else {
            let part = decodePart(json, bytes: bytes, position: .single, displayName: displayName)
            let events = part.part.flatMap { try? V2JSONDecoder.join([$0]) }.map { [$0] } ?? []
            return FileResult(
                encoding: part.encoding, events: events, isLog: false,
                unknownKeys: part.part?.unknownKeys ?? [], errors: part.errors)
        }
        switch decodeV1(json) {
        case .success(let document):
            return FileResult(encoding: .v1JSON, events: document.events, isLog: document.isLog, unknownKeys: document.unknownKeys, errors: [])
        case .failure(let failure):
            return FileResult(
                encoding: .v1JSON, events: [], isLog: json.arrayValue != nil, unknownKeys: [],
                errors: failure.errors.map { $0.inFile(displayName) })
        }
    }

    /// The one event of a single file, or of the parts of a multipart event in part order; the
    /// first problem is thrown. For reading an event again during a replay.
    ///
    /// When `digest` is the ``PartResult/digest`` (or, for several parts, ``combinedDigest(_:)``)
    /// recorded when the same files were read and checked before, and the bytes still give it,
    /// the schema and model checks are not made again: the bytes are the ones already checked.
    package func readEvent(file: String, parts: [String], digest: UInt64? = nil) throws(FormatError) -> Event {
        try readEvent(file: FileReference(path: file), parts: parts.map(FileReference.init(path:)), digest: digest)
    }

    /// ``readEvent(file:parts:digest:)`` for the files of a folder, read through its handle.
    package func readEvent(file: FileReference, parts: [FileReference], digest: UInt64? = nil) throws(FormatError) -> Event {
        let files = parts.isEmpty ? [file] : parts
        return try decodeEvent(try readContents(files), paths: files.map(\.path), isMultipart: !parts.isEmpty, digest: digest)
    }

    /// ``readEvent(file:parts:digest:)`` with the object changes in numbered form, for a merge's
    /// replay: a single file whose bytes are those already checked is read straight into
    /// numbers when it is binary (the binary decoder's own string table numbers them) or JSON
    /// the fast decoder takes; any other is decoded whole, then numbered.
    package func readNumberedEvent(file: FileReference, parts: [FileReference], digest: UInt64?) throws(FormatError) -> NumberedEvent {
        let files = parts.isEmpty ? [file] : parts
        let contents = try readContents(files)
        if parts.isEmpty, let digest, digest == Self.digest(contents[0]), case .success(let unwrapped) = unwrap(contents[0], displayName: file.path) {
            let reader = budgeted(storedBytes: contents[0].count)
            if V2Binary.isBinary(unwrapped.bytes) {
                do {
                    return try reader.binaryDecoder.decodeNumbered(unwrapped.bytes)
                } catch {
                    throw error.inFile(file.path)
                }
            }
            if let decoded = V2JSONFastDecoder.decodeNumbered(unwrapped.bytes, options: reader.jsonOptions) { return decoded.changes }
        }
        return NumberedEvent(try decodeEvent(contents, paths: files.map(\.path), isMultipart: !parts.isEmpty, digest: digest))
    }

    private func readContents(_ files: [FileReference]) throws(FormatError) -> [[UInt8]] {
        var contents: [[UInt8]] = []
        for file in files {
            do {
                contents.append(try Self.readBytes(file, limit: jsonOptions.maximumBytes))
            } catch {
                throw error.inFile(file.path)
            }
        }
        return contents
    }

    /// The event of files read again (``readEvent(file:parts:digest:)``).
    private func decodeEvent(_ contents: [[UInt8]], paths: [String], isMultipart: Bool, digest: UInt64?) throws(FormatError) -> Event {
        var reader = self
        // The whole event, whatever reader was given.
        reader.numbersChanges = false
        reader.skipsChecks = digest != nil && digest == Self.combinedDigest(contents.map(Self.digest))
        var decoded: [EventPart] = []
        for (index, bytes) in contents.enumerated() {
            // A v1 event in a folder is a single event and decodes here too; loose v1 logs are
            // never summarized, so never read again.
            let position: EventPartPosition = isMultipart ? .part(index: index + 1, count: contents.count) : .single
            let result = reader.decodePart(bytes, position: position, displayName: paths[index])
            if let error = result.errors.first { throw error }
            guard let part = result.part else { throw FormatError(.fileUnreadable, "the part could not be read", location: .init(file: paths[index])) }
            decoded.append(part)
        }
        return try V2JSONDecoder.join(decoded)
    }

    /// A fingerprint of a file's bytes, valid within this process (Swift's hashing is seeded per
    /// process): it tells whether bytes read again are those read before.
    package static func digest(_ bytes: [UInt8]) -> UInt64 {
        var hasher = Hasher()
        hasher.combine(bytes.count)
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
        return UInt64(bitPattern: Int64(hasher.finalize()))
    }

    /// The fingerprint of the files of one event, in part order.
    package static func combinedDigest(_ digests: [UInt64]) -> UInt64 {
        if digests.count == 1, let only = digests.first { return only }
        var hasher = Hasher()
        for digest in digests { hasher.combine(digest) }
        return UInt64(bitPattern: Int64(hasher.finalize()))
    }

    /// A decoded file, or every problem that stopped it from decoding.
    package struct PartResult: Sendable {
        package var encoding: EventEncoding?
        package var part: EventPart?
        package var errors: [FormatError]
        /// ``EventFileReader/digest(_:)`` of the bytes read, when they could be read.
        package var digest: UInt64?
        /// The wrappers removed before decoding, outermost first (Spec/wrappers.md 5); nil when
        /// the file could not be unwrapped.
        package var layers: [WrapperLayer]? = []
        /// The byte offsets of a binary event's sections of unknown type (Spec/v2-binary.md 5.5).
        package var unknownSectionOffsets: [Int] = []
        /// With ``EventFileReader/numbersChanges``, a single file's object changes in numbered form.
        package var numbered: NumberedEvent?

        package init(encoding: EventEncoding?, part: EventPart?, errors: [FormatError]) {
            self.encoding = encoding
            self.part = part
            self.errors = errors
        }
    }

    /// Reads `url` and decodes it as the given part of an event.
    package func readPart(at url: URL, position: EventPartPosition, displayName: String) -> PartResult {
        readPart(FileReference(url), position: position, displayName: displayName)
    }

    /// ``readPart(at:position:displayName:)`` for a file of a folder, read through its handle (a
    /// folder's reader names each file below the folder, where a `URL` per file cost its parsing
    /// and percent-encoding twice).
    package func readPart(_ file: FileReference, position: EventPartPosition, displayName: String) -> PartResult {
        let bytes: [UInt8]
        do {
            bytes = try Self.readBytes(file, limit: jsonOptions.maximumBytes)
        } catch {
            return PartResult(encoding: nil, part: nil, errors: [error.inFile(displayName)])
        }
        var result = decodePart(bytes, position: position, displayName: displayName)
        if fingerprints { result.digest = Self.digest(bytes) }
        return result
    }

    /// Decodes bytes already read, after removing their wrappers.
    package func decodePart(_ bytes: [UInt8], position: EventPartPosition, displayName: String) -> PartResult {
        switch unwrap(bytes, displayName: displayName) {
        case .failure(let error):
            var result = PartResult(encoding: nil, part: nil, errors: [error])
            result.layers = nil
            return result
        case .success(let unwrapped):
            var result = budgeted(storedBytes: bytes.count).decodeUnwrappedPart(unwrapped.bytes, position: position, displayName: displayName)
            result.layers = unwrapped.layers
            return result
        }
    }

    private func decodeUnwrappedPart(_ bytes: [UInt8], position: EventPartPosition, displayName: String) -> PartResult {
        if V2Binary.isBinary(bytes) {
            // The decoded event is taken apart in place, not copied: a copy retains and releases
            // every string and list of the event, once per file.
            var result = decodeBinary(bytes, displayName: displayName)
            guard var decoded = result.decoded.take() else { return PartResult(encoding: .v2Binary, part: nil, errors: result.errors) }
            guard position == .single else {
                return PartResult(
                    encoding: .v2Binary, part: nil,
                    errors: [FormatError(.binaryInvalidValue, "a binary event is never split into parts", location: .init(file: displayName, offset: 0))])
            }
            var part = PartResult(
                encoding: .v2Binary,
                part: EventPart(
                    position: .single, header: EventHeader(of: decoded.event), objectChanges: decoded.event.objectChanges,
                    unknownFields: decoded.event.unknownFields, unknownKeys: decoded.unknownMembers), errors: [])
            part.unknownSectionOffsets = decoded.unknownSectionOffsets
            part.numbered = decoded.numbered.take()
            return part
        }
        // The usual v2 file is decoded straight from its bytes, once; the general pipeline below is
        // for anything that may have a finding, and finds it (Spec/v2-json.md 4).
        if numbersChanges, position == .single {
            if let (part, numbered) = fastNumbered(bytes) {
                var result = PartResult(encoding: .v2JSON, part: part, errors: [])
                result.numbered = numbered
                return result
            }
        } else if let part = fastPart(bytes, position: position) {
            return PartResult(encoding: .v2JSON, part: part, errors: [])
        }
        let parsed = parse(bytes)
        guard let json = parsed.json else {
            return PartResult(encoding: nil, part: nil, errors: parsed.errors.map { $0.inFile(displayName) })
        }
        return decodePart(json, bytes: bytes, position: position, displayName: displayName)
    }

    /// The usual v2 file, decoded straight from its bytes when it has nothing to report; nil
    /// sends it through the general pipeline, which finds what there is (Spec/v2-json.md 4).
    private func fastPart(_ bytes: [UInt8], position: EventPartPosition) -> EventPart? {
        guard let part = V2JSONFastDecoder.decodePart(bytes, position: position, options: jsonOptions) else { return nil }
        if let model, !skipsChecks, !ModelValidator(model: model).validate(part.objectChanges).isEmpty { return nil }
        return part
    }

    /// ``fastPart(_:position:)`` of a single file, its changes in numbered form only.
    private func fastNumbered(_ bytes: [UInt8]) -> (EventPart, NumberedEvent)? {
        guard let decoded = V2JSONFastDecoder.decodeNumbered(bytes, options: jsonOptions) else { return nil }
        if let model, !skipsChecks, !ModelValidator(model: model).validate(decoded.changes).isEmpty { return nil }
        return decoded
    }

    private func decodePart(_ json: JSONValue, bytes: [UInt8], position: EventPartPosition, displayName: String) -> PartResult {
        func failure(_ errors: [FormatError], _ encoding: EventEncoding) -> PartResult {
            PartResult(encoding: encoding, part: nil, errors: errors.map { $0.inFile(displayName) })
        }
        if Self.dialect(of: json) == .v1JSON {
            do throws(FormatError) {
                let document: V1Document
                switch decodeV1(json) {
                case .success(let decoded): document = decoded
                case .failure(let failure): return PartResult(encoding: .v1JSON, part: nil, errors: failure.errors.map { $0.inFile(displayName) })
                }
                guard !document.isLog, let event = document.events.first, position == .single else {
                    throw FormatError(.v1Structure, "a v1 file in a cloud folder holds exactly one event object, not a log or a part", at: .root)
                }
                return PartResult(
                    encoding: .v1JSON,
                    part: EventPart(
                        position: .single, header: EventHeader(of: event), objectChanges: event.objectChanges,
                        unknownFields: event.unknownFields, unknownKeys: document.unknownKeys), errors: [])
            } catch {
                return failure([error], .v1JSON)
            }
        }
        do throws(FormatError) {
            // The fast check decides only "valid"; anything else gets the validator's exact errors.
            if !skipsChecks && !V2EventFastCheck.accepts(json) {
                let violations = try BundledSchema.v2Event.validator().validate(json)
                if !violations.isEmpty { return failure(violations, .v2JSON) }
            }
            let part = try V2JSONDecoder().decodePart(json, position: position)
            if let model, !skipsChecks {
                let modelErrors = ModelValidator(model: model).validate(part.objectChanges, v2Document: json)
                if !modelErrors.isEmpty { return failure(modelErrors, .v2JSON) }
            }
            return PartResult(encoding: .v2JSON, part: part, errors: [])
        } catch {
            return failure([error], .v2JSON)
        }
    }

    /// The binary decoder, spending this reader's value budget.
    private var binaryDecoder: V2BinaryDecoder {
        var limits = BinaryReadingLimits()
        limits.valueBudget = jsonOptions.valueBudget
        return V2BinaryDecoder(limits: limits)
    }

    /// A binary event, with its unknown members and sections (Spec/v2-binary.md 5.5, 9), checked
    /// against the model when one is given.
    private func decodeBinary(_ bytes: [UInt8], displayName: String) -> (decoded: DecodedBinaryEvent?, errors: [FormatError]) {
        do throws(FormatError) {
            let decoded = try numbersChanges ? binaryDecoder.decodeReportingUnknownsNumberedOnly(bytes) : binaryDecoder.decodeReportingUnknowns(bytes)
            if let model, !skipsChecks {
                let validator = ModelValidator(model: model)
                let errors = decoded.numbered.map { validator.validate($0) } ?? validator.validate(decoded.event.objectChanges)
                if !errors.isEmpty { return (nil, errors.map { $0.inFile(displayName) }) }
            }
            return (decoded, [])
        } catch {
            return (nil, [error.inFile(displayName)])
        }
    }

    /// Stage 1: strict JSON; in lenient mode a file that fails only for a trailing comma is
    /// parsed again leniently, and kept only if it is in the v1 dialect (v2 is always strict).
    private func parse(_ bytes: [UInt8]) -> (json: JSONValue?, errors: [FormatError]) {
        var strict = jsonOptions
        strict.allowsTrailingCommas = false
        do {
            return (try JSONParser.parse(bytes, options: strict), [])
        } catch {
            guard lenient, error.code == .jsonTrailingComma else { return (nil, [error]) }
            var relaxed = strict
            relaxed.allowsTrailingCommas = true
            guard let json = try? JSONParser.parse(bytes, options: relaxed), Self.dialect(of: json) == .v1JSON else {
                return (nil, [error])
            }
            return (json, [])
        }
    }

    /// The v1 pipeline after parsing: schema (every violation), model required, then decoding
    /// with the model (Spec/v1-json.md, "Reading").
    private func decodeV1(_ json: JSONValue) -> Result<V1Document, V1Failure> {
        do throws(FormatError) {
            let violations = try BundledSchema.v1Event.validator().validate(json)
            if !violations.isEmpty { return .failure(V1Failure(errors: violations)) }
            guard let model else {
                throw FormatError(.v1ModelRequired, "this is a 1.x-style JSON event; reading it needs the app's data model (--model PATH)", at: .root)
            }
            return .success(try V1JSONDecoder(model: model).decode(json))
        } catch {
            return .failure(V1Failure(errors: [error]))
        }
    }

    private struct V1Failure: Error {
        var errors: [FormatError]
    }

    /// v1 events use `store`/`changes`; v2 events `storeIdentifier`/`changesByEntity`. A top-level
    /// array is a v1 log.
    static func dialect(of json: JSONValue) -> EventEncoding {
        switch json {
        case .array: return .v1JSON
        case .object(let object):
            let v1 = object.contains("store") || object.contains("changes") || object.contains("otherstores")
            let v2 = object.contains("storeIdentifier") || object.contains("changesByEntity")
            return v1 && !v2 ? .v1JSON : .v2JSON
        default: return .v2JSON
        }
    }

    /// The name that stands for standard input where a file is expected.
    package static let standardInputName = "-"

    /// Standard input, at most `limit` bytes (read in pieces, so a larger stream is refused
    /// without being held).
    package static func readStandardInput(limit: Int) throws(FormatError) -> [UInt8] {
        var bytes: [UInt8] = []
        do {
            while let chunk = try FileHandle.standardInput.read(upToCount: 1 << 16), !chunk.isEmpty {
                bytes += chunk
                if bytes.count > limit {
                    throw FormatError(.jsonTooLarge, "standard input is larger than the limit of \(limit) bytes", location: .init(offset: limit))
                }
            }
        } catch let error as FormatError {
            throw error
        } catch {
            throw FormatError(.fileUnreadable, "standard input could not be read: \(error.localizedDescription)")
        }
        return bytes
    }

    /// Reads at most `limit` bytes of a regular file; a larger file is refused from its size,
    /// before anything is loaded.
    ///
    /// The file is opened without following a link and without blocking, and checked with
    /// `fstat` on the open descriptor, which is then the only thing read: a name swapped for a
    /// link or a FIFO after the folder was listed is refused, never followed or waited on.
    package static func readBytes(at url: URL, limit: Int) throws(FormatError) -> [UInt8] {
        try readBytes(FileReference(url), limit: limit)
    }

    /// ``readBytes(at:limit:)`` for a file of a folder, opened through the folder's handle.
    package static func readBytes(_ file: FileReference, limit: Int) throws(FormatError) -> [UInt8] {
        let (descriptor, size) = try openRegularFile(file)
        defer { close(descriptor) }
        guard size <= Int64(limit) else {
            // Decided from the size and the first bytes alone: a binary event is binary.too-large
            // (Spec/v2-binary.md 11), anything else json.too-large, and nothing more is read.
            var head = [UInt8](repeating: 0, count: V2Binary.magic.count)
            let read = head.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
            let code: FormatError.Code = read == head.count && head == V2Binary.magic ? .binaryTooLarge : .jsonTooLarge
            throw FormatError(code, "the file is larger than the limit of \(limit) bytes", location: .init(offset: limit))
        }
        do {
            return try FileInput.read(descriptor, size: size, limit: limit)
        } catch {
            guard error != .tooLarge else {
                throw FormatError(.jsonTooLarge, "the file is larger than the limit of \(limit) bytes", location: .init(offset: limit))
            }
            throw FormatError(.fileUnreadable, "the file could not be read: \(error.reason)")
        }
    }

    /// Opens `file` without following a link and without blocking, and checks on the open
    /// descriptor that it is a regular file; returns the descriptor (the caller closes it) and
    /// the size `fstat` gives.
    static func openRegularFile(_ file: FileReference) throws(FormatError) -> (descriptor: Int32, size: Int64) {
        // A file of a folder is opened from the folder's descriptor, a name at a time
        // (Spec/cloud-layout.md 7); a file given directly is opened by its path.
        let path = file.path
        let descriptor = file.open()
        guard descriptor >= 0 else {
            // O_NOFOLLOW fails with ELOOP on a link: said in words, not as "too many levels".
            guard errno != ELOOP else {
                throw FormatError(
                    .fileUnreadable,
                    "\(path) is a symbolic link, and links are never followed (Spec/cloud-layout.md 7): give the path of the file it points to")
            }
            throw FormatError(.fileUnreadable, "the file could not be opened: \(String(cString: strerror(errno)))")
        }
        do {
            return (descriptor, try FileInput.regularSize(descriptor))
        } catch {
            close(descriptor)
            throw FormatError(.fileUnreadable, error.reason)
        }
    }
}
