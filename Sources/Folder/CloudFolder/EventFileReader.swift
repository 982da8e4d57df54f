import Foundation
import JSONDocument
import EnsembleModel
import EventCodecs
import SchemaValidation

extension FormatError.Code {
    public static let fileUnreadable = Self("file.unreadable")
    public static let formatUnsupportedDialect = Self("format.unsupported-dialect")
}

/// The encodings a reader tells apart by a file's first bytes.
public enum EventEncoding: String, Sendable, Hashable {
    case v2JSON = "v2-json"
    case v1JSON = "v1-json"
}

/// Reads one event file through the whole pipeline: bytes, JSON, schema, then decoding
/// (Spec/v2-json.md, "Reading"). Every failure is a ``FormatError`` attributed to the file.
public struct EventFileReader: Sendable {
    public var jsonOptions: JSONReadingOptions

    public init(jsonOptions: JSONReadingOptions = .strict) { self.jsonOptions = jsonOptions }

    /// A decoded file, or every problem that stopped it from decoding.
    public struct PartResult: Sendable {
        public var encoding: EventEncoding?
        public var part: V2EventPart?
        public var errors: [FormatError]
    }

    /// Reads `url` and decodes it as the given part of an event.
    public func readPart(at url: URL, position: EventPartPosition, displayName: String) -> PartResult {
        let bytes: [UInt8]
        do {
            bytes = try Self.readBytes(at: url, limit: jsonOptions.maximumBytes)
        } catch {
            return PartResult(encoding: nil, part: nil, errors: [error.inFile(displayName)])
        }
        return decodePart(bytes, position: position, displayName: displayName)
    }

    /// Decodes bytes already read.
    public func decodePart(_ bytes: [UInt8], position: EventPartPosition, displayName: String) -> PartResult {
        func failure(_ errors: [FormatError], _ encoding: EventEncoding? = nil) -> PartResult {
            PartResult(encoding: encoding, part: nil, errors: errors.map { $0.inFile(displayName) })
        }
        let json: JSONValue
        do {
            json = try JSONParser.parse(bytes, options: jsonOptions)
        } catch {
            return failure([error])
        }
        let encoding = Self.dialect(of: json)
        guard encoding == .v2JSON else {
            return failure([FormatError(.formatUnsupportedDialect, "this is a 1.x-style JSON event; reading that dialect needs the data model and is not supported yet", at: .root)], encoding)
        }
        do {
            let violations = try BundledSchema.v2Event.validator().validate(json)
            if !violations.isEmpty { return failure(violations, encoding) }
            let part = try V2JSONDecoder().decodePart(json, position: position)
            return PartResult(encoding: encoding, part: part, errors: [])
        } catch {
            return failure([error], encoding)
        }
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

    /// Reads at most `limit` bytes; a larger file is refused before it is loaded.
    static func readBytes(at url: URL, limit: Int) throws(FormatError) -> [UInt8] {
        do {
            let handle = try FileHandle(forReadingFrom: url)
            defer { try? handle.close() }
            let data = try handle.read(upToCount: limit + 1) ?? Data()
            if data.count > limit {
                throw FormatError(.jsonTooLarge, "the file is larger than the limit of \(limit) bytes", location: .init(offset: limit))
            }
            return [UInt8](data)
        } catch let error as FormatError {
            throw error
        } catch {
            throw FormatError(.fileUnreadable, "the file could not be read: \(error.localizedDescription)")
        }
    }
}
