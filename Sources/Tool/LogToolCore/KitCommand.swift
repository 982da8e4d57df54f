import ArgumentParser
import EnsemblesToolkit
import Foundation

/// `logtool kit`: this `logtool` as the engine of the file-format suites of the conformance
/// kit (Spec/merge.md 9.9). Each subcommand is one operation of an engine's contract; another
/// implementation provides the same operations to run the suites against itself. Hidden: it
/// is an interface for `logtool conformance`, not a command for people.
struct Kit: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kit",
        abstract: "The engine operations of the conformance kit's file-format suites (Spec/merge.md 9.9).",
        shouldDisplay: false,
        subcommands: [KitDecode.self, KitEncode.self, KitBlob.self, KitUnwrap.self, KitFileName.self, KitModel.self]
    )
}

/// The failure of an engine operation: `{"errors":[...]}` on standard output, exit 1
/// (Spec/merge.md 9.9).
func kitFailure(_ errors: [FormatError]) -> ToolExit {
    writeJSON(
        .object(
            JSONObject([
                (
                    "errors",
                    .array(
                        errors.map { error in
                            .object(
                                JSONObject([
                                    ("code", .string(error.code.rawValue)),
                                    ("file", error.location.file.map(JSONValue.string) ?? .null),
                                    ("line", error.location.line.map { JSONValue(Int64($0)) } ?? .null),
                                    ("message", .string(error.message)),
                                    ("offset", error.location.offset.map { JSONValue(Int64($0)) } ?? .null),
                                    ("pointer", error.location.pointer.map { .string($0.description) } ?? .null),
                                ]))
                        })
                )
            ])))
    return ToolExit(status: .problemsFound)
}

/// The bytes of `path`, or a usage error.
func kitBytes(_ path: String) throws -> [UInt8] {
    guard let data = FileManager.default.contents(atPath: path) else {
        writeErrors([FormatError(.fileUnreadable, "cannot be read", location: .init(file: path))])
        throw ToolExit(status: .usage)
    }
    return [UInt8](data)
}

struct KitDecode: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode",
        abstract: "Read event files and print the event as canonical v2 JSON and LF.",
        discussion: """
            One FILE is one event file (v2 JSON, v2 binary, or v1 with --model); several FILEs are \
            the parts of one multipart set, in order, joined. Exit 0 and the event; exit 1 and \
            {"errors":[...]} (code, file, line, offset, pointer, message) on standard output, the \
            first error first.
            """)

    @Flag(name: .long, help: "Read FILE with the binary decoder alone (Spec/v2-binary.md), whatever its first byte.")
    var binary = false

    @Option(name: .long, help: ArgumentHelp("Read the one FILE as part I of an N-part set; prints nothing when it reads.", valueName: "I/N"))
    var part: String?

    @Option(name: .long, help: ArgumentHelp("Validate against this data model (Spec/model.md 9).", valueName: "MODEL"))
    var model: String?

    @Flag(name: .long, help: "Read v1 files leniently (Spec/v1-json.md).")
    var lenient = false

    @Argument(help: "The event file, or the parts of one set.")
    var files: [String]

    func run() throws {
        guard !files.isEmpty else { throw ValidationError("give a file") }
        var dataModel: DataModel?
        if let model {
            do throws(FormatError) {
                dataModel = try ModelBundle(path: model).load()
            } catch {
                throw kitFailure([error])
            }
        }
        let reader = EventFileReader(lenient: lenient, model: dataModel)
        let event: Event
        if binary {
            let bytes = try kitBytes(files[0])
            do throws(FormatError) {
                event = try V2BinaryDecoder().decode(bytes)
            } catch {
                throw kitFailure([error.inFile(files[0])])
            }
        } else if let part {
            let numbers = part.split(separator: "/").compactMap { Int($0) }
            guard numbers.count == 2, files.count == 1 else { throw ValidationError("--part takes I/N and one file") }
            let result = reader.decodePart(try kitBytes(files[0]), position: .part(index: numbers[0], count: numbers[1]), displayName: files[0])
            if !result.errors.isEmpty || result.part == nil { throw kitFailure(result.errors) }
            return
        } else if files.count > 1 {
            var parts: [EventPart] = []
            for (index, file) in files.enumerated() {
                let result = reader.decodePart(try kitBytes(file), position: .part(index: index + 1, count: files.count), displayName: file)
                guard let part = result.part, result.errors.isEmpty else { throw kitFailure(result.errors) }
                parts.append(part)
            }
            do throws(FormatError) {
                event = try V2JSONDecoder.join(parts)
            } catch {
                throw kitFailure([error])
            }
        } else {
            let result = reader.readFile(at: URL(fileURLWithPath: files[0]), displayName: files[0])
            guard result.errors.isEmpty else { throw kitFailure(result.errors) }
            do throws(FormatError) {
                var output = Data()
                for event in result.events { output += try V2JSONEncoder().encode(event) + [0x0A] }
                Console.out(output)
            } catch {
                throw kitFailure([error])
            }
            return
        }
        do throws(FormatError) {
            Console.out(Data(try V2JSONEncoder().encode(event) + [0x0A]))
        } catch {
            throw kitFailure([error])
        }
    }
}

struct KitEncode: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "encode",
        abstract: "Read one v2 event file and write its canonical v2 binary bytes (Spec/v2-binary.md) on standard output.")

    @Argument(help: "A v2 event file.")
    var file: String

    func run() throws {
        let result = EventFileReader().readFile(at: URL(fileURLWithPath: file), displayName: file)
        guard result.errors.isEmpty, result.events.count == 1 else { throw kitFailure(result.errors) }
        do throws(FormatError) {
            Console.out(Data(try V2BinaryEncoder().encode(result.events[0])))
        } catch {
            throw kitFailure([error])
        }
    }
}

struct KitBlob: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "blob", abstract: "Read one data file (Spec/data-blobs.md) and write its content on standard output.")

    @Argument(help: "A data file: raw bytes or a blob container.")
    var file: String

    func run() throws {
        let bytes = try kitBytes(file)
        do throws(FormatError) {
            Console.out(Data(try DataBlob.content(of: bytes)))
        } catch {
            throw kitFailure([error.inFile(file)])
        }
    }
}

struct KitUnwrap: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unwrap",
        abstract: "Remove the wrappers of one event file (Spec/wrappers.md) and describe what is inside.",
        discussion: """
            Prints {"contentSHA256": HEX, "layers": [outermost first]} and LF; exit 1 and the errors \
            when a wrapper cannot be removed or the content is not an event (JSON or binary).
            """)

    @Option(name: .long, help: "The password (test data only; people give it otherwise).")
    var password: String?

    @Argument(help: "A wrapped file.")
    var file: String

    func run() throws {
        let bytes = try kitBytes(file)
        let unwrapped: Unwrapper.Unwrapped
        do throws(FormatError) {
            unwrapped = try Unwrapper(password: password.map { PasswordSource(password: $0) }).unwrap(bytes)
        } catch {
            throw kitFailure([error.inFile(file)])
        }
        if let error = Unwrapper.kindError(unwrapped.kind, bytes: unwrapped.bytes, layers: unwrapped.layers) { throw kitFailure([error.inFile(file)]) }
        // A data file's name is the hex SHA-256 of its bytes (Spec/convert.md 4): the same digest.
        let digest = Converter.dataFileName(unwrapped.bytes)
        writeJSON(
            .object(
                JSONObject([
                    ("contentSHA256", .string(digest)), ("layers", .array(unwrapped.layers.map { .string($0.rawValue) })),
                ])))
    }
}

struct KitFileName: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "file-name",
        abstract: "Classify a regular, non-empty file by its name and folder (Spec/cloud-layout.md 4, 7).",
        discussion: """
            Prints one JSON object and LF: {"kind": "event", "globalCount", "store", "revision", \
            "part"}, {"kind": "baseline" or "legacyBaseline", "globalCount", "uniqueIdentifier", \
            "part"[, "storePrefix"]}, {"kind": "store", "store"}, {"kind": "dataFile", "name"} or \
            {"kind": "debris", "debris"}; "part" is null or {"index", "count"}.
            """)

    @Argument(help: "The folder of the ensemble the file is in: stores, events, baselines or data.")
    var folder: String

    @Argument(help: "The file's name.")
    var name: String

    func run() throws {
        guard let subfolder = EnsembleSubfolder(rawValue: folder) else {
            throw ValidationError("\(folder): not one of stores, events, baselines, data")
        }
        func part(_ number: PartNumber?) -> JSONValue {
            number.map { .object(JSONObject([("count", JSONValue(Int64($0.count))), ("index", JSONValue(Int64($0.index)))])) } ?? .null
        }
        let described: [(String, JSONValue)]
        switch CloudFileName.classify(name: name, in: subfolder, size: 1) {
        case .event(let name):
            described = [
                ("kind", .string("event")), ("globalCount", JSONValue(name.globalCount)), ("store", .string(name.storeIdentifier)),
                ("revision", JSONValue(name.revision)), ("part", part(name.part)),
            ]
        case .baseline(let name):
            described =
                [
                    ("kind", .string(name.isLegacyName ? "legacyBaseline" : "baseline")), ("globalCount", JSONValue(name.globalCount)),
                    ("uniqueIdentifier", .string(name.uniqueIdentifier)), ("part", part(name.part)),
                ] + (name.storePrefix.map { [("storePrefix", JSONValue.string($0))] } ?? [])
        case .storeRegistration(let store): described = [("kind", .string("store")), ("store", .string(store))]
        case .dataFile(let name): described = [("kind", .string("dataFile")), ("name", .string(name))]
        case .debris(let kind, _): described = [("kind", .string("debris")), ("debris", .string(kind.rawValue))]
        }
        writeJSON(.object(JSONObject(described)))
    }
}

struct KitModel: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "model",
        abstract: "Read a data model and print its description (Spec/model.md 7), canonical, and LF.",
        discussion: "Exit 1 and the errors (code, file, line) when the model cannot be read.")

    @Option(name: .long, help: "The version to read (default: the current one).")
    var modelVersion: String?

    @Argument(help: "A .xcdatamodeld, a .xcdatamodel or a contents file.")
    var path: String

    func run() throws {
        do throws(FormatError) {
            let model = try ModelBundle(path: path).load(version: modelVersion)
            Console.out(Data(JSONWriter().bytes(model.descriptionDocument) + [0x0A]))
        } catch {
            throw kitFailure([error])
        }
    }
}
