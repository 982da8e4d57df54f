import Foundation
import Testing
import JSONDocument
import EnsembleModel
import EventCodecs
import CloudFolder
import KeyedArchive
import SchemaValidation

/// Fuzz crashers kept as regression tests (swift-protobuf's `FuzzTesting/FailCases`): every file
/// of `Fuzz/FailCases/` goes through every decoder that the fuzz target `FuzzDecoders` feeds, and
/// through the whole reading pipeline. Each must read the input or reject it with a code of
/// Spec/README.md section 7; a crash stops the test run.
@Suite("Fuzz fail cases")
struct FuzzCrasherTests {
    static let folder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz/FailCases")

    /// Every file of the folder but its README and hidden files, sorted.
    static let files: [String] = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
        .filter { !$0.hasPrefix(".") && $0 != "README.md" }
        .sorted()

    @Test("Fuzz/FailCases is there, with its README and at least three cases")
    func folderPresent() {
        #expect(FileManager.default.fileExists(atPath: Self.folder.appendingPathComponent("README.md").path), "\(Self.folder.path)")
        #expect(Self.files.count >= 3, "\(Self.files)")
        #expect(SpecErrorCodes.listed.count > 100, "Spec/README.md section 7 not found or not read")
    }

    /// A rejection: a code the Spec lists and, when the error has an offset, a byte of the input
    /// (its end included: a truncated input is reported there).
    static func expectListed(_ error: FormatError, _ decoder: String, _ file: String, bytes: [UInt8]) {
        #expect(SpecErrorCodes.listed.contains(error.code.rawValue), "\(file), \(decoder): \(error) has a code Spec/README.md section 7 does not list")
        if let offset = error.location.offset {
            #expect((0...bytes.count).contains(offset), "\(file), \(decoder): \(error) lies outside the \(bytes.count) bytes")
        }
    }

    @Test("each fail case is read or rejected with a listed code by every decoder the fuzz target feeds", arguments: files)
    func replay(file: String) throws {
        let bytes = [UInt8](try Data(contentsOf: Self.folder.appendingPathComponent(file)))
        // The calls of FuzzDecoders.fuzzOneInput, in its order.
        do throws(FormatError) {
            let event = try V2BinaryDecoder().decode(bytes)
            // An accepted binary file decodes to an event that has both encodings (v2-binary.md 1).
            do throws(FormatError) {
                _ = try V2BinaryEncoder().encode(event)
                _ = try V2JSONEncoder().encode(event)
            } catch {
                Issue.record("\(file): decoded as binary, but does not encode again: \(error)")
            }
        } catch {
            Self.expectListed(error, "binary decoder", file, bytes: bytes)
        }
        do throws(FormatError) {
            _ = try DataBlob.content(of: bytes)
        } catch {
            Self.expectListed(error, "blob reader", file, bytes: bytes)
        }
        var general: Event?
        do throws(FormatError) {
            let json = try JSONParser.parse(bytes)
            do throws(FormatError) {
                let decoded = try V2JSONDecoder().decodeEvent(json)
                if decoded.unknownKeys.isEmpty, try BundledSchema.v2Event.validator().validate(json).isEmpty { general = decoded.event }
            } catch {
                Self.expectListed(error, "v2 JSON decoder", file, bytes: bytes)
            }
        } catch {
            Self.expectListed(error, "JSON parser", file, bytes: bytes)
        }
        // The fast JSON decoder takes only what the general pipeline takes, and gives its event.
        if let fast = V2JSONFastDecoder.decodeEvent(bytes) {
            #expect(fast == general, "\(file): the fast JSON decoder took an input the general pipeline reads otherwise")
        }
        // The whole pipeline, as every command reads an event file: an event or the reasons why not.
        let result = EventFileReader().decodePart(bytes, position: .single, displayName: file)
        #expect((result.part == nil) != result.errors.isEmpty, "\(file): \(result.errors)")
        for error in result.errors { Self.expectListed(error, "reading pipeline", file, bytes: bytes) }
        // Keyed archives, with every class the fuzz target allows (Spec/device-state.md 3).
        var classes = ArchiveClasses.xcodeModel
        classes.keyedClasses["CDEPropertyChangeValue"] = []
        do throws(FormatError) {
            _ = try KeyedArchiveReader(classes: classes).read(bytes)
        } catch {
            Self.expectListed(error, "keyed-archive reader", file, bytes: bytes)
        }
    }

    @Test("the hostile keyed archives are refused with the codes their README gives")
    func hostileArchives() throws {
        for (file, code) in [("keyed-archive-cycle.bplist", FormatError.Code.archiveCycle), ("keyed-archive-doubling.bplist", .archiveTooLarge)] {
            let bytes = [UInt8](try Data(contentsOf: Self.folder.appendingPathComponent(file)))
            do throws(FormatError) {
                _ = try KeyedArchiveReader().read(bytes)
                Issue.record("\(file) was read")
            } catch {
                #expect(error.code == code, "\(file)")
            }
        }
    }
}
