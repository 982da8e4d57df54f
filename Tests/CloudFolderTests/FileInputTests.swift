import FileInput
import Foundation
import Testing

/// The one reader of files from folders the toolkit does not control (Spec/cloud-layout.md 7):
/// what it refuses, and how it reads a file whose size changed since `fstat`.
@Suite("FileInput")
struct FileInputTests {
    static func scratch() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("file-input-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    static func failure(_ body: () throws(FileInput.Failure) -> [UInt8]) -> FileInput.Failure? {
        do {
            _ = try body()
            return nil
        } catch {
            return error
        }
    }

    @Test("a regular file is read whole up to its limit, and one byte more is too large, also when it grew since fstat")
    func limits() throws {
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("file").path
        let content = (0..<1000).map { UInt8(truncatingIfNeeded: $0) }
        try Data(content).write(to: URL(fileURLWithPath: path))
        #expect(try FileInput.read(path: path, limit: 1000) == content)
        #expect(Self.failure { () throws(FileInput.Failure) in try FileInput.read(path: path, limit: 999) } == .tooLarge)
        // A size from fstat smaller than the file (it grew): read on, never beyond the limit.
        for size: Int64 in [0, 1, 3, 500, 999] {
            let descriptor = open(path, FileInput.openFlags())
            defer { close(descriptor) }
            #expect(try FileInput.read(descriptor, size: size, limit: 1000) == content, "size \(size)")
            #expect(lseek(descriptor, 0, SEEK_SET) == 0)
            #expect(Self.failure { () throws(FileInput.Failure) in try FileInput.read(descriptor, size: size, limit: 999) } == .tooLarge)
        }
    }

    @Test("a piece of an open file from an offset, shorter where the file ends, leaves the descriptor's offset alone")
    func pieces() throws {
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("file").path
        let content = (0..<1000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        try Data(content).write(to: URL(fileURLWithPath: path))
        let descriptor = open(path, FileInput.openFlags())
        defer { close(descriptor) }
        #expect(try FileInput.read(descriptor, at: 0, upTo: 10) == Array(content[0..<10]))
        #expect(try FileInput.read(descriptor, at: 500, upTo: 3) == Array(content[500..<503]))
        #expect(try FileInput.read(descriptor, at: 990, upTo: 100) == Array(content[990...]))
        #expect(try FileInput.read(descriptor, at: 1000, upTo: 100) == [])
        #expect(try FileInput.read(descriptor, at: 5000, upTo: 100) == [])
        #expect(lseek(descriptor, 0, SEEK_CUR) == 0)
        #expect(Self.failure { () throws(FileInput.Failure) in try FileInput.read(-1, at: 0, upTo: 10) } == .cannotRead(errno: EBADF))
    }

    @Test("nothing, a link not followed, a FIFO, a folder and a device are refused without waiting; a link the caller follows is read")
    func refusals() throws {
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        func read(_ name: String, followingLink: Bool = false) -> FileInput.Failure? {
            Self.failure { () throws(FileInput.Failure) in try FileInput.read(path: folder.path + "/" + name, followingLink: followingLink, limit: 100) }
        }
        try Data("x".utf8).write(to: folder.appendingPathComponent("file"))
        try FileManager.default.createSymbolicLink(atPath: folder.path + "/link", withDestinationPath: "file")
        try FileManager.default.createSymbolicLink(atPath: folder.path + "/device", withDestinationPath: "/dev/zero")
        #expect(mkfifo(folder.path + "/fifo", 0o600) == 0)
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("folder"), withIntermediateDirectories: false)
        #expect(read("missing") == .cannotOpen(errno: ENOENT))
        #expect(read("link") == .cannotOpen(errno: ELOOP))
        #expect(read("link", followingLink: true) == nil)
        #expect(read("fifo") == .notRegular)
        #expect(read("folder") == .notRegular)
        #expect(read("device") == .cannotOpen(errno: ELOOP))
        #expect(read("device", followingLink: true) == .notRegular)
        // A socket is refused as what it is, never opened (`open` would fail with ENXIO).
        let socketPath = folder.path + "/socket"
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: socketPath.utf8.prefix($0.count - 1)) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(bound == 0)
        #expect(read("socket") == .notRegular)
    }
}
