import Foundation
import Testing
import FileWrappers

/// Wrapped files made by the independent script `scripts/make-wrapped-fixtures.py` (Python's
/// `cryptography` and `zipfile`): the valid ones unwrap to the plain event's bytes, each damaged
/// one is refused with the code and byte offset the script computed (Spec/wrappers.md 7).
@Suite("Wrapped files: valid and damaged fixtures")
struct WrappedFileTests {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let fixtures = root.appendingPathComponent("Fixtures/wrappers")

    struct Case: Sendable, CustomTestStringConvertible {
        var file: String
        var password: String?
        var code: String?
        var offset: Int?
        var layers: [String]
        var testDescription: String { file }
    }

    static func cases(_ folder: String) -> [Case] {
        guard let data = try? Data(contentsOf: fixtures.appendingPathComponent("\(folder)/cases.json")),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let cases = object["cases"] as? [[String: Any]]
        else { return [] }
        return cases.map { entry in
            Case(
                file: entry["file"] as? String ?? "", password: entry["password"] as? String, code: entry["code"] as? String,
                offset: entry["offset"] as? Int, layers: entry["layers"] as? [String] ?? [])
        }
    }

    static func unwrapper(_ password: String?) -> Unwrapper {
        Unwrapper(password: password.map { PasswordSource(password: $0) })
    }

    @Test("the fixture folders are there: 6 valid and 27 damaged files")
    func present() {
        #expect(Self.cases("valid").count == 6)
        #expect(Self.cases("damaged").count == 27)
    }

    @Test("each valid wrapped file unwraps, layer by layer, to the plain event's bytes", arguments: cases("valid"))
    func valid(testCase: Case) throws {
        let plain = [UInt8](try Data(contentsOf: Self.root.appendingPathComponent("Fixtures/verify/healthy/cloud/E/events/0_ALPHA-STORE_0.cdeevent")))
        let bytes = [UInt8](try Data(contentsOf: Self.fixtures.appendingPathComponent("valid/\(testCase.file)")))
        let unwrapped = try Self.unwrapper(testCase.password).unwrap(bytes)
        #expect(unwrapped.bytes == plain)
        #expect(unwrapped.layers.map(\.rawValue) == testCase.layers)
        #expect(unwrapped.kind == .json)
    }

    @Test("each damaged file is refused with its code and offset", arguments: cases("damaged"))
    func damaged(testCase: Case) throws {
        let bytes = [UInt8](try Data(contentsOf: Self.fixtures.appendingPathComponent("damaged/\(testCase.file)")))
        var error: FormatError?
        do {
            let unwrapped = try Self.unwrapper(testCase.password).unwrap(bytes)
            error = Unwrapper.kindError(unwrapped.kind, bytes: unwrapped.bytes, layers: unwrapped.layers)
        } catch let thrown {
            error = thrown
        }
        #expect(error?.code.rawValue == testCase.code, "\(String(describing: error))")
        #expect(error?.location.offset == testCase.offset, "\(String(describing: error))")
        // The message says what the file is and shows its first bytes where it names a kind.
        if let error, error.code.rawValue.hasPrefix("file.kind-") {
            #expect(error.message.contains("first bytes"), "\(error.message)")
        }
    }

    @Test("the password is asked for only when an encrypted file is met, and once")
    func passwordAskedOnce() throws {
        final class Counter: @unchecked Sendable {
            let lock = NSLock()
            var count = 0
        }
        let counter = Counter()
        let source = PasswordSource {
            counter.lock.lock()
            counter.count += 1
            counter.lock.unlock()
            return .password("correct horse battery staple")
        }
        let unwrapper = Unwrapper(password: source)
        _ = try unwrapper.unwrap(Array("{}".utf8))
        #expect(counter.count == 0)
        for file in ["encrypted.cdeevent", "zipped-encrypted.cdeevent"] {
            _ = try unwrapper.unwrap([UInt8](try Data(contentsOf: Self.fixtures.appendingPathComponent("valid/\(file)"))))
        }
        #expect(counter.count == 1)
    }
}
