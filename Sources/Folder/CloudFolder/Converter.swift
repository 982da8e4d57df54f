import CFileSystem
import TemporaryFiles
import Crypto
import Foundation
import JSONDocument
import EnsembleModel
import EventCodecs
import ProgressReporting
import FileWrappers

extension FormatError.Code {
    public static let convertDestinationExists = Self("convert.destination-exists")
    /// The parent folder of a path to create is missing (Spec/README.md 6).
    public static let fileParentMissing = Self("file.parent-missing")
    /// A path to create is its source, lies inside it or contains it (Spec/README.md 6.1).
    public static let fileDestinationInsideSource = Self("file.destination-inside-source")
    public static let convertLossy = Self("convert.lossy")
    public static let convertVerificationFailed = Self("convert.verification-failed")
    public static let convertUnconvertible = Self("convert.unconvertible")
    public static let convertWriteFailed = Self("convert.write-failed")
}

/// The dialect a conversion writes.
package enum TargetDialect: String, Sendable, CaseIterable {
    case v1, v2
}

/// What a conversion did (Spec/convert.md, "Summary").
package struct ConversionSummary: Sendable {
    /// Paths are the command-line arguments joined with the path inside them (Spec/convert.md).
    package struct ConvertedFile: Sendable {
        package var source: String
        package var destination: String
        package var events: Int
    }

    package var files: [ConvertedFile] = []
    /// Attribute values moved into data files (two equal values count twice, share one file).
    package var movedToDataFiles = 0
    /// Entries of the source that were not converted (debris), with their debris kind.
    package var skipped: [(path: String, reason: String)] = []
    package var notes: [String] = []

    package init() {}
}

/// Converts event files and cloud folders between the v1 and v2 JSON dialects without ever
/// touching the source or leaving a partial destination (Spec/convert.md).
package struct Converter: Sendable {
    /// Inline binary values longer than this move to data files when writing v2.
    package static let inlineBinaryLimit = 10_000

    /// The name a binary value gets in `data/`: the lowercase hex SHA-256 of its bytes.
    package static func dataFileName(_ bytes: some DataProtocol) -> String {
        lowercaseHex(SHA256.hash(data: bytes))
    }

    package var reader: EventFileReader
    package var target: TargetDialect
    /// Write v2 events in the binary encoding (Spec/v2-binary.md) instead of JSON.
    package var binary: Bool
    /// Write every data file in the blob container (Spec/data-blobs.md).
    package var blobContainers = false
    /// The wrappers around every written file (`--zip`, `--encrypt`; Spec/wrappers.md 8): plain
    /// by default, whatever the source's wrappers were, so an output is never half wrapped.
    package var wrapping = Wrapping.plain

    package init(reader: EventFileReader, target: TargetDialect, binary: Bool = false) {
        self.reader = reader
        self.target = target
        self.binary = binary
    }

    /// Every unknown member the target dialect has no place for, and every binary event with
    /// sections of unknown type, as `convert.lossy`: each event is written again in canonical
    /// form, which has no place for such sections (Spec/v2-binary.md 5.5: pointer `""`).
    private func checkLossless(_ unknownKeys: [UnknownKey], filesWithUnknownSections: [String]) throws(ConversionFailure) {
        let lost = unknownKeys.filter { DialectKeys.unknownMemberIsLost(at: $0.pointer, writingV1: target == .v1) }
        guard lost.isEmpty && filesWithUnknownSections.isEmpty else {
            throw ConversionFailure(
                errors: filesWithUnknownSections.map { file in
                    FormatError(
                        .convertLossy, "this binary event has sections of a later minor version, which a converted event has no place for",
                        location: .init(file: file, pointer: .root))
                }
                    + lost.map { key in
                        FormatError(
                            .convertLossy, "this unknown member has no place in \(target.rawValue) and would be lost",
                            location: .init(file: key.file, pointer: key.pointer))
                    })
        }
    }

    /// An argument as given followed by a path inside it, without doubling `/`.
    /// `base`, without its trailing slashes (Spec/merge.md 5.9: never `//`), then `/inside`.
    package static func join(_ base: String, _ inside: String) -> String {
        if inside.isEmpty || inside == "." { return base }
        // By bytes: `/` is one byte and never part of another character, and counting characters
        // cost more than the rest of reading a small event's entry.
        let bytes = base.utf8
        var end = bytes.endIndex
        while bytes.distance(from: bytes.startIndex, to: end) > 1, bytes[bytes.index(before: end)] == UInt8(ascii: "/") { end = bytes.index(before: end) }
        // Made a String before joining: a substring joined counted its characters.
        let trimmed = String(base[..<end])
        return trimmed == "/" ? "/" + inside : trimmed + "/" + inside
    }

    /// The one rule for a path a command will create (Spec/README.md 6): its parent folder must
    /// exist (nothing creates missing parents), and it must not exist unless `replacing`
    /// (`--force`). Both are usage errors.
    package static func checkDestination(_ path: String, replacing: Bool, existsCode: FormatError.Code) throws(ConversionFailure) {
        let url = URL(fileURLWithPath: path).standardizedFileURL
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.deletingLastPathComponent().path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ConversionFailure(
                usage: true,
                errors: [
                    FormatError(
                        .fileParentMissing, "the folder \(url.deletingLastPathComponent().path) does not exist; it is not created", location: .init(file: path))
                ])
        }
        guard replacing || !exists(url) else {
            throw ConversionFailure(usage: true, errors: [FormatError(existsCode, "already exists; give --force to replace it", location: .init(file: path))])
        }
    }

    /// Refuses a destination inside `source` (or equal to it, or containing it), however it is
    /// spelled: every existing ancestor of the destination is compared with the source by device
    /// and inode, so `..`, and links anywhere in either path, cannot hide it (Spec/README.md 6.1).
    package static func checkOutside(_ destination: String, source: String, code: FormatError.Code) throws(ConversionFailure) {
        func identity(_ path: String) -> (dev_t, ino_t)? {
            var status = stat()
            return stat(path, &status) == 0 ? (status.st_dev, status.st_ino) : nil
        }
        guard let sourceIdentity = identity(source) else { return }
        let destinationURL = URL(fileURLWithPath: destination).standardizedFileURL
        var ancestor = destinationURL
        while true {
            if let current = identity(ancestor.path), current == sourceIdentity {
                throw ConversionFailure(
                    usage: true, errors: [FormatError(code, "the destination is \(source) or inside it", location: .init(file: destination))])
            }
            if ancestor.path == "/" { break }
            ancestor = ancestor.deletingLastPathComponent()
        }
        // The destination must not contain the source either (replacing it would remove it).
        var sourceAncestor = URL(fileURLWithPath: source).standardizedFileURL.resolvingSymlinksInPath()
        let destinationIdentity = identity(destinationURL.path)
        while let destinationIdentity, sourceAncestor.path != "/" {
            sourceAncestor = sourceAncestor.deletingLastPathComponent()
            if let current = identity(sourceAncestor.path), current == destinationIdentity {
                throw ConversionFailure(
                    usage: true, errors: [FormatError(code, "the destination contains \(source)", location: .init(file: destination))])
            }
        }
    }

    /// Whether anything is at `url`, a dangling symbolic link included.
    package static func exists(_ url: URL) -> Bool {
        (try? FileManager.default.attributesOfItem(atPath: url.path)) != nil
    }

    /// Converts `source` (an event file, a v1 log or a cloud folder) into `destination`, which
    /// must not exist unless `replacing`. On any error nothing changes at `destination`.
    package func convert(source: String, destination: String, replacing: Bool = false) throws(ConversionFailure) -> ConversionSummary {
        let destinationURL = URL(fileURLWithPath: destination).standardizedFileURL
        try Self.checkDestination(destination, replacing: replacing, existsCode: .convertDestinationExists)
        try Self.checkOutside(destination, source: source, code: .fileDestinationInsideSource)
        if target == .v1 && reader.model == nil {
            throw ConversionFailure(
                usage: true,
                errors: [
                    FormatError(
                        .v1ModelRequired, "writing v1 needs the data model (--model PATH): the result is read back to check it",
                        location: .init(file: destination))
                ])
        }
        var isDirectory: ObjCBool = false
        // `-` is one event file or log read from standard input (Spec/convert.md 2).
        guard source == EventFileReader.standardInputName || FileManager.default.fileExists(atPath: source, isDirectory: &isDirectory) else {
            throw ConversionFailure(usage: true, errors: [FormatError(.fileUnreadable, "no such file or folder", location: .init(file: source))])
        }
        var staging = try StagingArea(for: destinationURL)
        staging.replacing = replacing
        defer { staging.discard() }
        var summary = ConversionSummary()
        if isDirectory.boolValue {
            let listings: [EnsembleListing]
            do {
                listings = try CloudFolderScanner().scan(source)
            } catch {
                throw ConversionFailure(usage: true, errors: [FormatError(.fileUnreadable, error.message, location: .init(file: source))])
            }
            for listing in listings {
                let inside = listing.displayPath == "." ? "" : listing.displayPath
                try convertEnsemble(
                    listing, into: staging.url.appendingPathComponent(inside),
                    sourceBase: Self.join(source, inside), destinationBase: Self.join(destination, inside), summary: &summary)
            }
        } else {
            try convertFile(URL(fileURLWithPath: source), displayName: source, destination: destination, staging: staging, summary: &summary)
        }
        try staging.commit()
        if !wrapping.isPlain {
            summary.notes.append("every file was written wrapped as \(WrapperLayer.stackName(wrapping.layers)) (outermost first), names unchanged")
        }
        return summary
    }

    // MARK: - Files

    private func convertFile(
        _ url: URL, displayName: String, destination: String, staging: StagingArea,
        summary: inout ConversionSummary
    ) throws(ConversionFailure) {
        let result = reader.readFile(at: url, displayName: displayName)
        guard result.errors.isEmpty else { throw ConversionFailure(errors: result.errors) }
        try checkLossless(
            result.unknownKeys.map { UnknownKey(file: displayName, pointer: $0) },
            filesWithUnknownSections: result.unknownSectionOffsets.isEmpty ? [] : [displayName])
        if result.isLog {
            // A log becomes an ensemble folder: one file per event.
            var writer = FolderWriter(root: staging.url, target: target, binary: binary, reader: reader, wrapping: wrapping)
            writer.blobContainers = blobContainers
            for (index, event) in result.events.enumerated() {
                try writer.write(
                    event,
                    kind: .event(
                        EventFileName(
                            globalCount: event.globalCount, storeIdentifier: event.storeIdentifier,
                            revision: event.revision, part: nil)),
                    source: displayName, sourcePointer: .root / index)
            }
            try writer.verify()
            summary.movedToDataFiles += writer.movedValues
            summary.files.append(.init(source: displayName, destination: destination, events: result.events.count))
            summary.notes.append("a log has no store registrations; none were invented, so stores/ is absent")
            return
        }
        guard let event = result.events.first else { throw ConversionFailure(errors: []) }
        // A single event stays a single file; with no data/ folder beside it, blobs stay inline.
        let bytes = try FolderWriter.encode(event, target: target, binary: binary, at: displayName, reader: reader)
        try staging.writeFile(try FolderWriter.wrapped(bytes, name: URL(fileURLWithPath: destination).lastPathComponent, wrapping, at: destination))
        // Named by the destination: the source's name may be `-`, standard input, read only once.
        let check = FolderWriter.readingBack(wrapping, with: reader).readFile(at: staging.url, displayName: destination)
        guard check.errors.isEmpty, check.events == [event], check.layers == wrapping.layers else {
            throw ConversionFailure(
                errors: [FormatError(.convertVerificationFailed, "the written file does not read back as the source event", location: .init(file: displayName))]
                    + check.errors)
        }
        summary.files.append(.init(source: displayName, destination: destination, events: 1))
    }

    // MARK: - Folders

    private func convertEnsemble(
        _ listing: EnsembleListing, into root: URL, sourceBase: String, destinationBase: String,
        summary: inout ConversionSummary
    ) throws(ConversionFailure) {
        let contents = EnsembleContents.read(listing, reader: reader)
        // An invalid registration is copied as it is and named in the notes (Spec/convert.md 3.2).
        let registrations = Set(contents.stores.map(\.file))
        var problems: [FormatError] = []
        for problem in contents.problems {
            let file = Self.join(sourceBase, problem.location.file ?? "")
            guard problem.code == .storeInvalid, let inside = problem.location.file, registrations.contains(inside) else {
                problems.append(problem.inFile(file))
                continue
            }
            summary.notes.append("\(file) is not a valid store registration (\(problem.code.rawValue): \(problem.message)); it was copied as it is")
        }
        contents.forEachEntry { entry in
            guard !entry.isComplete else { return }
            problems.append(
                FormatError(
                    .convertUnconvertible, "a multipart set with parts missing cannot be converted", location: .init(file: Self.join(sourceBase, entry.file))))
        }
        guard problems.isEmpty else { throw ConversionFailure(errors: problems) }
        try checkLossless(
            contents.unknownKeys.map { UnknownKey(file: Self.join(sourceBase, $0.file), pointer: $0.pointer) },
            filesWithUnknownSections: contents.filesWithUnknownSections.map { Self.join(sourceBase, $0) })
        var writer = FolderWriter(root: root, target: target, binary: binary, reader: reader, wrapping: wrapping)
        writer.blobContainers = blobContainers
        for folder in EnsembleSubfolder.allCases where listing.holdsFolder(folder) {
            try StagingArea.createFolder(root.appendingPathComponent(folder.rawValue))
        }
        for debris in contents.debris {
            summary.skipped.append((Self.join(sourceBase, debris.path), debris.kind.rawValue))
        }
        for store in contents.stores {
            try writer.copyRegistration(
                listing.file(store.file), to: listing.foldedPath(store.file),
                source: Self.join(sourceBase, store.file))
        }
        // Data files have the layers of the folder's other files, when they all have the same
        // (Spec/wrappers.md 8); in a folder that mixes wrappings they are taken as they are.
        let folderLayers = contents.folderLayers ?? []
        var takenAsTheyAre: [String] = []
        for data in contents.dataFiles {
            let unwrapped = try writer.copyDataFile(
                listing.file(data.file), name: data.name, removing: folderLayers,
                source: Self.join(sourceBase, data.file))
            if !folderLayers.isEmpty && !unwrapped { takenAsTheyAre.append(Self.join(sourceBase, data.file)) }
        }
        if contents.folderLayers == nil && !contents.dataFiles.isEmpty {
            summary.notes.append(
                "\(sourceBase) mixes wrappings (verify.mixed-wrapping): its data files were taken as they are, with no wrapper removed")
        }
        if !takenAsTheyAre.isEmpty {
            summary.notes.append(
                "not \(WrapperLayer.stackName(folderLayers)) like the other files of the folder, so taken as they are: \(takenAsTheyAre.joined(separator: ", "))"
            )
        }
        let total = contents.events.count + contents.baselines.count
        for (index, file) in contents.events.enumerated() {
            if index % 64 == 0 { ProgressReport.report("events converted", done: index, total: total) }
            guard let event = file.entry.event else { continue }
            try writer.write(event, kind: .event(file.name), source: Self.join(sourceBase, file.entry.file), sourcePointer: nil)
            summary.files.append(.init(source: Self.join(sourceBase, file.entry.file), destination: Self.join(destinationBase, writer.lastWritten), events: 1))
        }
        for file in contents.baselines {
            guard let event = file.entry.event else { continue }
            try writer.write(event, kind: .baseline(file.name), source: Self.join(sourceBase, file.entry.file), sourcePointer: nil)
            summary.files.append(.init(source: Self.join(sourceBase, file.entry.file), destination: Self.join(destinationBase, writer.lastWritten), events: 1))
        }
        try writer.verify()
        summary.movedToDataFiles += writer.movedValues
    }
}

/// Why a conversion (or another command that writes a new folder) stopped; nothing was written.
package struct ConversionFailure: Error, Sendable {
    /// The command line or the paths were wrong (exit 2), rather than the content (exit 1).
    package var usage = false
    package var errors: [FormatError]

    package init(usage: Bool = false, errors: [FormatError]) {
        self.usage = usage
        self.errors = errors
    }
}

/// Writes the files of one ensemble into the staging area and checks them afterwards.
struct FolderWriter {
    enum Kind {
        case event(EventFileName)
        case baseline(BaselineFileName)
    }

    let root: URL
    let target: TargetDialect
    let binary: Bool
    var blobContainers = false
    let reader: EventFileReader
    /// The wrappers around every written file, and the reader that reads them back with the
    /// writing password (Spec/convert.md 7 step 4).
    let wrapping: Wrapping
    let checker: EventFileReader
    var movedValues = 0
    var lastWritten = ""
    /// What each written event file must read back as.
    private var written: [(path: String, event: Event)] = []
    /// The paths of `written`: searching the list for each new file made a folder of N events
    /// cost N^2 comparisons (two events of one name: Spec/convert.md 2). Paths and names here
    /// by their bytes: two files named in NFC and NFD are two files.
    private var writtenPaths: Set<ExactString> = []
    /// The SHA-256 of every data file written, by name: enough to compare contents (a moved
    /// value with a copied file, the written file with what was meant) without keeping them.
    private var blobs: [ExactString: [UInt8]] = [:]
    /// The SHA-256 of every registration's content (inside its wrappers), by path.
    private var copied: [ExactString: [UInt8]] = [:]

    init(root: URL, target: TargetDialect, binary: Bool, reader: EventFileReader, wrapping: Wrapping = .plain) {
        self.root = root
        self.target = target
        self.binary = binary
        self.reader = reader
        self.wrapping = wrapping
        self.checker = Self.readingBack(wrapping, with: reader)
    }

    /// `reader` with the password that `wrapping` encrypts with, for reading written files back.
    static func readingBack(_ wrapping: Wrapping, with reader: EventFileReader) -> EventFileReader {
        var checker = reader
        if let password = wrapping.readingPassword { checker.unwrapper.password = password }
        return checker
    }

    /// `content` in the wrappers of `wrapping`; the zip entry is named `name` (the file's name,
    /// Spec/wrappers.md 4.3).
    static func wrapped(_ content: [UInt8], name: String, _ wrapping: Wrapping, at path: String) throws(ConversionFailure) -> [UInt8] {
        guard !wrapping.isPlain else { return content }
        guard let bytes = wrapping.wrap(content, name: name) else {
            throw ConversionFailure(errors: [
                FormatError(
                    .convertWriteFailed, "could not be wrapped as \(WrapperLayer.stackName(wrapping.layers)) (a zip archive holds less than 4 GiB)",
                    location: .init(file: path))
            ])
        }
        return bytes
    }

    /// The layers a written file must read back with, outermost first.
    var layers: [WrapperLayer] { wrapping.layers }

    /// Writes one event; `source` and `sourcePointer` name it in errors.
    mutating func write(_ sourceEvent: Event, kind: Kind, source: String, sourcePointer: JSONPointer?) throws(ConversionFailure) {
        let name: String
        switch kind {
        case .event(let file):
            name = "events/\(file.globalCount)_\(file.storeIdentifier)_\(file.revision).cdeevent"
        case .baseline(let file):
            name = "baselines/" + [String(file.globalCount), file.uniqueIdentifier, file.storePrefix].compactMap { $0 }.joined(separator: "_") + ".cdeevent"
        }
        guard !writtenPaths.contains(ExactString(name)) else {
            throw ConversionFailure(errors: [
                FormatError(
                    .convertUnconvertible, "two events of the source map to the same file name \(name)",
                    location: .init(file: source, pointer: sourcePointer))
            ])
        }
        let event = target == .v2 ? try moveBlobs(sourceEvent) : sourceEvent
        let bytes = try Self.encode(event, target: target, binary: binary, at: name, reader: reader)
        let fileName = String(name.split(separator: "/").last ?? Substring(name))
        try StagingArea.write(try Self.wrapped(bytes, name: fileName, wrapping, at: name), to: root.appendingPathComponent(name))
        written.append((name, event))
        writtenPaths.insert(ExactString(name))
        lastWritten = name
    }

    /// The file's bytes, checked to decode back to the same event before anything is written
    /// (Spec/convert.md, "Lossy conversions").
    static func encode(_ event: Event, target: TargetDialect, binary: Bool, at name: String, reader: EventFileReader) throws(ConversionFailure) -> [UInt8] {
        let bytes: [UInt8]
        do {
            switch target {
            case .v2: bytes = binary ? try V2BinaryEncoder().encode(event) : try V2JSONEncoder().encode(event)
            case .v1: bytes = try V1JSONEncoder().encode([event], asLog: false)
            }
        } catch {
            throw ConversionFailure(errors: [
                FormatError(
                    .convertLossy, "converting to \(target.rawValue) would lose information: \(error.message)",
                    location: .init(file: name, pointer: error.location.pointer))
            ])
        }
        let decoded = reader.decodePart(bytes, position: .single, displayName: name)
        guard let part = decoded.part, (try? V2JSONDecoder.join([part])) == event else {
            throw ConversionFailure(
                errors: [
                    FormatError(
                        .convertLossy,
                        "converting to \(target.rawValue) would change the event: a value reads back differently (for example an integer stored in a Double attribute)",
                        location: .init(file: name))
                ] + decoded.errors)
        }
        return bytes
    }

    /// A store registration: its content inside the source's wrappers (a registration is
    /// unwrapped by its content, Spec/wrappers.md 1), byte for byte, in the wrappers of
    /// `wrapping`; the content's digest is kept for the read-back.
    mutating func copyRegistration(_ source: FileReference, to path: String, source display: String) throws(ConversionFailure) {
        let content: [UInt8]
        do throws(FormatError) {
            var unwrapper = reader.unwrapper
            unwrapper.maximumBytes = Self.registrationLimit
            content = try unwrapper.unwrap(try EventFileReader.readBytes(source, limit: Self.registrationLimit)).bytes
        } catch {
            throw ConversionFailure(errors: [
                FormatError(error.code, "could not be copied: \(error.message)", location: .init(file: display, offset: error.location.offset))
            ])
        }
        let fileName = String(path.split(separator: "/").last ?? Substring(path))
        try StagingArea.write(try Self.wrapped(content, name: fileName, wrapping, at: path), to: root.appendingPathComponent(path))
        copied[ExactString(path)] = Array(SHA256.hash(data: content))
    }

    /// The largest registration a reader reads (Spec/cloud-layout.md 5).
    static let registrationLimit = 1024 * 1024

    /// A data file of the source: its value (without the layers `removing` when it has them,
    /// see ``DataFileReader/content(at:removing:unwrapper:)``), raw or in a container as asked,
    /// in the wrappers of `wrapping`. Returns whether layers were removed.
    mutating func copyDataFile(
        _ source: FileReference, name: String, removing layers: [WrapperLayer] = [], source display: String
    ) throws(ConversionFailure) -> Bool {
        let read: (content: [UInt8], unwrapped: Bool)
        do {
            read = try DataFileReader.content(source, removing: layers, unwrapper: reader.unwrapper)
        } catch {
            throw ConversionFailure(errors: [error.inFile(display)])
        }
        try writeDataFile(read.content, name: name)
        blobs[ExactString(name)] = Array(SHA256.hash(data: read.content))
        return read.unwrapped
    }

    /// Writes a data file's value, in a container when asked or when it looks like one
    /// (Spec/data-blobs.md), then in the wrappers of `wrapping`.
    private func writeDataFile(_ content: [UInt8], name: String) throws(ConversionFailure) {
        let path = "data/\(name)"
        let stored = blobContainers || DataBlob.isContainer(content) ? DataBlob.container(content, deflate: true) : content
        try StagingArea.write(try Self.wrapped(stored, name: name, wrapping, at: path), to: root.appendingPathComponent(path))
    }

    /// Binary values over the inline limit go to `data/<sha256>` (Spec/convert.md, "Blobs").
    private mutating func moveBlobs(_ event: Event) throws(ConversionFailure) -> Event {
        var result = event
        for (c, change) in event.objectChanges.enumerated() {
            var files = change.dataFiles
            var properties = change.propertyChanges
            for (p, property) in properties.enumerated() {
                guard case .attribute(.binary(let data)) = property.value, data.count > Converter.inlineBinaryLimit else { continue }
                let name = Converter.dataFileName(data)
                let digest = Array(SHA256.hash(data: data))
                if blobs[ExactString(name)] == nil {
                    let url = root.appendingPathComponent("data").appendingPathComponent(name)
                    // A data file of the same name copied from the source must hold the same bytes.
                    if FileManager.default.fileExists(atPath: url.path) {
                        throw ConversionFailure(errors: [
                            FormatError(
                                .convertUnconvertible, "data/\(name) of the source holds other bytes than the value that would move there",
                                location: .init(file: "data/\(name)"))
                        ])
                    }
                    try writeDataFile(Array(data), name: name)
                    blobs[ExactString(name)] = digest
                } else if blobs[ExactString(name)] != digest {
                    throw ConversionFailure(errors: [
                        FormatError(
                            .convertUnconvertible, "data/\(name) of the source holds other bytes than the value that would move there",
                            location: .init(file: "data/\(name)"))
                    ])
                }
                movedValues += 1
                properties[p] = PropertyChange(name: property.name, value: .attributeInDataFile(filename: name), unknownFields: property.unknownFields)
                files.append(name)
            }
            result.objectChanges[c] = ObjectChange(
                entity: change.entity, globalIdentifier: change.globalIdentifier, type: change.type,
                propertyChanges: properties, dataFiles: files, unknownFields: change.unknownFields)
        }
        return result
    }

    /// Reads every written file back and compares it with what was meant to be written.
    func verify() throws(ConversionFailure) {
        for (path, expected) in written {
            let check = checker.readFile(at: root.appendingPathComponent(path), displayName: path)
            guard check.errors.isEmpty, check.events == [expected], check.layers == layers else {
                throw ConversionFailure(
                    errors: [FormatError(.convertVerificationFailed, "the written file does not read back as the source event", location: .init(file: path))]
                        + check.errors)
            }
        }
        for (path, digest) in copied where registrationDigest(root.appendingPathComponent(path.value)) != digest {
            throw ConversionFailure(errors: [
                FormatError(.convertVerificationFailed, "the copied file does not read back as its source", location: .init(file: path.value))
            ])
        }
        for (name, digest) in blobs where dataFileDigest(root.appendingPathComponent("data").appendingPathComponent(name.value)) != digest {
            throw ConversionFailure(errors: [
                FormatError(.convertVerificationFailed, "the data file does not read back as written", location: .init(file: "data/\(name.value)"))
            ])
        }
    }

    /// The SHA-256 of a written registration's content inside exactly the layers written; nil when
    /// it does not read back so.
    private func registrationDigest(_ url: URL) -> [UInt8]? {
        guard let bytes = try? EventFileReader.readBytes(at: url, limit: Self.registrationLimit + 65_536) else { return nil }
        var unwrapper = checker.unwrapper
        unwrapper.maximumBytes = Self.registrationLimit
        guard let unwrapped = try? unwrapper.unwrap(bytes), unwrapped.layers == layers else { return nil }
        return Array(SHA256.hash(data: unwrapped.bytes))
    }

    /// The SHA-256 of a written data file's value inside exactly the layers written; nil when
    /// it does not read back so.
    private func dataFileDigest(_ url: URL) -> [UInt8]? {
        guard !layers.isEmpty else { return Self.digest(ofDataFile: url) }
        guard let read = try? DataFileReader.content(at: url, removing: layers, unwrapper: checker.unwrapper), read.unwrapped else { return nil }
        return Array(SHA256.hash(data: read.content))
    }

    /// The SHA-256 of a written data file's content, read back in chunks; nil when it does not read.
    private static func digest(ofDataFile url: URL) -> [UInt8]? {
        var hasher = SHA256()
        guard (try? DataFileReader.check(at: url, content: { hasher.update(data: $0) })) != nil else { return nil }
        return Array(hasher.finalize())
    }
}

/// A hidden sibling of the destination where everything is written first; one `rename` at the
/// end publishes it, so a crash leaves no destination (only this `.partial-` entry).
package struct StagingArea {
    package let url: URL
    let destination: URL
    private var committed = false
    /// `--force`: ``commit()`` replaces an existing destination (swapped in atomically where the
    /// file system can; the old content is removed only after the new one is in place).
    package var replacing = false

    package init(for destination: URL) throws(ConversionFailure) {
        self.destination = destination
        url = TemporaryFiles.reserveSibling(of: destination)
    }

    package static func createFolder(_ url: URL) throws(ConversionFailure) {
        guard TemporaryFiles.beginWrite() else { throw Self.stopped(url) }
        defer { TemporaryFiles.endWrite() }
        do {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        } catch {
            throw ConversionFailure(errors: [
                FormatError(.convertWriteFailed, "could not create a folder: \(error.localizedDescription)", location: .init(file: url.path))
            ])
        }
    }

    func writeFile(_ bytes: [UInt8]) throws(ConversionFailure) {
        try Self.write(bytes, to: url)
    }

    /// Writes one file, creating its folder; flushed to disk unless `durable` is false (for callers
    /// that flush everything once before `commit`).
    package static func write(_ bytes: [UInt8], to url: URL, durable: Bool = true) throws(ConversionFailure) {
        try write(to: url, durable: durable) { handle in try handle.write(contentsOf: bytes) }
    }

    /// Writes `bytes` as the file at `path`, whose folder exists, by one `open`, `write` and
    /// `close`, not flushed: for a writer of many small files into a staging folder (`generate`),
    /// which flushes once before ``commit()``. Several threads may call it at once.
    package static func writeFile(_ bytes: [UInt8], atPath path: String) throws(ConversionFailure) {
        guard TemporaryFiles.beginWrite() else { throw Self.stopped(URL(fileURLWithPath: path)) }
        defer { TemporaryFiles.endWrite() }
        let failure = bytes.withUnsafeBytes { writeWholeFile($0, atPath: path) }
        if failure != 0 {
            let reason = String(cString: strerror(failure))
            throw ConversionFailure(errors: [FormatError(.convertWriteFailed, "could not write: \(reason)", location: .init(file: path))])
        }
    }

    /// Writes the file at `url` from the pieces `produce` hands to its argument, each written as it
    /// comes (a large file is never held whole), and returns the SHA-256 of what was written, for
    /// the caller to compare with the file read back. A `FormatError` that `produce` throws is
    /// reported as it is, not as a failed write.
    package static func write(
        to url: URL, producing produce: (_ emit: ([UInt8]) throws(FormatError) -> Void) throws(FormatError) -> Void
    ) throws(ConversionFailure) -> [UInt8] {
        var hasher = SHA256()
        var produceFailure: FormatError?
        do {
            try write(to: url) { handle in
                do throws(FormatError) {
                    try produce { (piece) throws(FormatError) in
                        hasher.update(data: piece)
                        do { try handle.write(contentsOf: piece) } catch {
                            throw FormatError(.convertWriteFailed, "could not write: \(error.localizedDescription)")
                        }
                    }
                } catch {
                    if error.code != .convertWriteFailed { produceFailure = error }
                    throw error
                }
            }
        } catch {
            throw produceFailure.map { ConversionFailure(errors: [$0]) } ?? error
        }
        return Array(hasher.finalize())
    }

    /// Copies the regular file `source` to `url` in chunks and returns the SHA-256 of what was
    /// copied, for the caller to compare with the copy read back (``DataFileReader/digest(of:)``).
    package static func copy(_ source: FileReference, to url: URL) throws(ConversionFailure) -> [UInt8] {
        var hasher = SHA256()
        var readFailure: FormatError?
        do {
            try write(to: url) { handle in
                do throws(FormatError) {
                    try DataFileReader.forEachChunk(source) { (chunk) throws(FormatError) in
                        hasher.update(data: chunk)
                        do { try handle.write(contentsOf: chunk) } catch {
                            throw FormatError(.convertWriteFailed, "could not write: \(error.localizedDescription)")
                        }
                    }
                } catch {
                    readFailure = error
                    throw error
                }
            }
        } catch {
            // A source that cannot be read is reported as such, not as a failed write.
            throw readFailure.map { ConversionFailure(errors: [$0]) } ?? error
        }
        return Array(hasher.finalize())
    }

    private static func write(to url: URL, durable: Bool = true, _ body: (FileHandle) throws -> Void) throws(ConversionFailure) {
        guard TemporaryFiles.beginWrite() else { throw Self.stopped(url) }
        defer { TemporaryFiles.endWrite() }
        do {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            let handle = try TemporaryFiles.openFile(url)
            defer { try? handle.close() }
            try body(handle)
            if durable { try handle.synchronize() }
        } catch {
            throw ConversionFailure(errors: [
                FormatError(.convertWriteFailed, "could not write: \(error.localizedDescription)", location: .init(file: url.path))
            ])
        }
    }

    private static func stopped(_ url: URL) -> ConversionFailure {
        ConversionFailure(errors: [FormatError(.convertWriteFailed, "stopped by a signal", location: .init(file: url.path))])
    }

    package mutating func commit() throws(ConversionFailure) {
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw ConversionFailure(errors: [FormatError(.convertUnconvertible, "the source holds nothing to convert", location: .init(file: destination.path))]
            )
        }
        do {
            try TemporaryFiles.publish(url, at: destination, replacing: replacing)
        } catch {
            switch error {
            case .destinationExists:
                // Another writer published first: the same answer as if it had been there at the start.
                throw ConversionFailure(
                    usage: true,
                    errors: [
                        FormatError(
                            .convertDestinationExists, "appeared while this was written; it is never replaced without --force",
                            location: .init(file: destination.path))
                    ])
            case .failed(let reason):
                throw ConversionFailure(errors: [FormatError(.convertWriteFailed, reason, location: .init(file: destination.path))])
            }
        }
        committed = true
    }

    package func discard() {
        // A committed area was unregistered when it was published.
        if !committed { TemporaryFiles.release(url) }
    }
}

/// Creates (or empties) the file at `path` and writes `bytes` into it; returns 0, or the `errno`
/// of the call that failed.
private func writeWholeFile(_ bytes: UnsafeRawBufferPointer, atPath path: String) -> Int32 {
    let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
    guard descriptor >= 0 else { return errno }
    var offset = 0
    while offset < bytes.count, let base = bytes.baseAddress {
        let written = write(descriptor, base + offset, bytes.count - offset)
        if written < 0 {
            if errno == EINTR { continue }
            let failure = errno
            close(descriptor)
            return failure
        }
        offset += written
    }
    return close(descriptor) == 0 ? 0 : errno
}
