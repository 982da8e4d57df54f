import Foundation
import Testing
import DataModel
import JSONDocument
import EnsembleModel
import EventCodecs
import CloudFolder
import KeyedArchive
import RemoteFolder
import SchemaValidation
import TICDS
import TestSupport

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
        let fast = V2JSONFastDecoder.decodeEvent(bytes)
        if let fast {
            #expect(fast == general, "\(file): the fast JSON decoder took an input the general pipeline reads otherwise")
        }
        // Its numbered form is taken exactly where its event is, and names the same changes.
        let numbered = V2JSONFastDecoder.decodeNumbered(bytes)
        #expect((numbered == nil) == (fast == nil), "\(file): the fast JSON decoder's numbered form and its event disagree")
        if let numbered, let fast { #expect(numbered.changes.resolved == NumberedEvent(fast).resolved, "\(file)") }
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
        Self.replayTICDS(bytes, file)
        Self.replayRemote(bytes, file)
        // The model reader (the fuzz target's group `model`): the XML crashers stopped it too.
        do throws(FormatError) {
            _ = try ModelXMLReader.parse(Data(bytes), displayPath: "contents", versionName: nil).modelHash
        } catch {
            #expect(error.code.rawValue.hasPrefix("datamodel."), "\(file): \(error)")
            Self.expectListed(error, "model reader", file, bytes: bytes)
        }
    }

    /// The TICoreDataSync readers the fuzz target feeds (its groups `fzacryptor`, `changeset`,
    /// `plist`; Spec/ticds.md 3 to 5), in its order.
    static func replayTICDS(_ bytes: [UInt8], _ file: String) {
        let key = [UInt8](repeating: 7, count: 32)
        do throws(FormatError) {
            _ = try FZACryptor.decrypt(bytes, key: key)
        } catch {
            expectListed(error, "FZACryptor", file, bytes: bytes)
        }
        // Signed, so that the decryption and the padding check are reached.
        if bytes.count >= 80 {
            let message = Array(bytes.prefix(64 + (bytes.count - 64) / 16 * 16))
            let signed = message + FZACryptor.hmac(message, key: key)
            do throws(FormatError) {
                _ = try FZACryptor.decrypt(signed, key: key)
            } catch {
                #expect(error.code == .ticdsBadPadding, "\(file): a signed file of a whole number of blocks was refused with \(error)")
            }
        }
        if ChangeSetForm.detect(bytes) == .sqlite {
            do throws(FormatError) {
                _ = try SyncChangeStore.changes(bytes)
            } catch {
                expectListed(error, "change-set reader", file, bytes: bytes)
            }
            do throws(FormatError) {
                _ = try SyncChangeStore.appliedSets(bytes)
            } catch {
                expectListed(error, "AppliedSyncChangeSets reader", file, bytes: bytes)
            }
        }
        do throws(FormatError) {
            _ = try SyncChangeStore.payload(bytes)
        } catch {
            expectListed(error, "change payload reader", file, bytes: bytes)
        }
        do throws(FormatError) {
            _ = try TICDSFolder.dictionary(bytes)
        } catch {
            #expect(error.code == .ticdsInvalidPlist, "\(file): \(error)")
            expectListed(error, "TICDS property-list reader", file, bytes: bytes)
        }
    }

    /// The remote listing readers the fuzz target feeds (its groups `webdav`, `s3`, `server`,
    /// `httpdate`; Spec/remote.md 3, 11.4, 12).
    static func replayRemote(_ bytes: [UInt8], _ file: String) {
        let data = Data(bytes)
        do throws(FormatError) {
            _ = try MultistatusReader.read(data, maximumMembers: 1_000)
        } catch {
            #expect(error.code == .remoteMalformedListing, "\(file): \(error)")
            expectListed(error, "WebDAV multistatus reader", file, bytes: bytes)
        }
        do throws(FormatError) {
            _ = try ListBucketReader.read(data, maximumKeys: 1_000)
        } catch {
            #expect(error.code == .remoteMalformedListing, "\(file): \(error)")
            expectListed(error, "S3 ListBucketResult reader", file, bytes: bytes)
        }
        _ = S3ErrorReader.code(data)
        do throws(FormatError) {
            let object = try EnsemblesServerProtocol.answer(data, endpoint: "listdir", file: ".")
            do throws(FormatError) {
                _ = try EnsemblesServerProtocol.listedNames(object, file: ".")
            } catch {
                expectListed(error, "Ensembles Server listdir reader", file, bytes: bytes)
            }
        } catch {
            expectListed(error, "Ensembles Server answer reader", file, bytes: bytes)
        }
        let text = String(decoding: bytes.prefix(256), as: UTF8.self)
        _ = MultistatusReader.date(text)
        _ = MultistatusReader.imfFixdate(text)
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
