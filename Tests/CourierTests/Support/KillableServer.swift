import Foundation
import XCTest
@testable import Courier

/// An httpbin of the test's own, in its own session, so the test can kill it with SIGKILL
/// (master and workers at once, like a crash) and start it again on the same port.
final class KillableServer: Sendable {
    let port: Int
    private let gunicorn: String
    private let pidFile: String
    private let process = Locked<Process?>(nil)

    init(gunicorn: String, port: Int) {
        self.gunicorn = gunicorn
        self.port = port
        pidFile = FileManager.default.temporaryDirectory.appendingPathComponent("courier-killable-\(port).pid").path
    }

    var url: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// The gunicorn of Scripts/test.sh's virtualenv, or a skip/failure saying how to get one.
    static func gunicornPath() throws -> String {
        _ = try HTTPBin.url()  // the same rules: skip by hand, fail under Scripts/test.sh
        let path = ProcessInfo.processInfo.environment["COURIER_GUNICORN"] ?? ".build/venv/bin/gunicorn"
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw HTTPBin.missing("No gunicorn at \(path): run Scripts/test.sh, which installs it")
        }
        return path
    }

    /// Starts the server and returns once its worker has booted (read from its log, no polling).
    func start(timeout: TimeInterval = 60) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setsid")
        process.arguments = [gunicorn, "--bind", "127.0.0.1:\(port)", "--worker-class", "gthread", "--workers", "1",
                             "--threads", "128", "--pid", pidFile, "--log-level", "info", "httpbin:app"]
        let log = Pipe()
        process.standardError = log
        process.standardOutput = FileHandle.nullDevice
        let booted = DispatchSemaphore(value: 0)
        let seen = Locked("")
        log.fileHandleForReading.readabilityHandler = { handle in
            let chunk = handle.availableData
            if chunk.isEmpty { handle.readabilityHandler = nil; return }
            let text = seen.withLock { $0 += String(decoding: chunk, as: UTF8.self); return $0 }
            if text.contains("Booting worker") { booted.signal() }
        }
        try process.run()
        self.process.withLock { $0 = process }
        guard booted.wait(timeout: .now() + timeout) == .success else {
            kill()
            throw RequestError.invalidURL(url.absoluteString, reason: "the killable httpbin did not start: \(seen.withLock { $0 })")
        }
        log.fileHandleForReading.readabilityHandler = { handle in
            if handle.availableData.isEmpty { handle.readabilityHandler = nil }
        }
    }

    /// Kills master and workers with SIGKILL, as a crash would, and waits until they are gone.
    func kill() {
        if let text = try? String(contentsOfFile: pidFile, encoding: .utf8),
           let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)) {
            let group = getpgid(pid)
            // Only ever a group of the server's own: never this test process's.
            if group > 0, group != getpgrp() { signalProcess(-group, SIGKILL) } else { signalProcess(pid, SIGKILL) }
        }
        let process = self.process.withLock { process -> Process? in
            defer { process = nil }
            return process
        }
        if let process {
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: pidFile)
    }
}

private func signalProcess(_ pid: pid_t, _ signal: Int32) {
    _ = kill(pid, signal)
}
