import Courier
import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

// Body encoding of a 10-field struct (Courier's reflection encoders against JSONEncoder with
// .convertToSnakeCase), and a 1 GiB multipart upload against uploadTask(with:fromFile:).

struct BenchAddress: Codable, Sendable {
    let street: String
    let postCode: String
}

/// The 10-field struct: strings with escapes, ints, a double, a bool, an optional, an array, a
/// dictionary, a Date, a URL and a nested struct. Two copies, since one type cannot be both a
/// JSON body and a form body.
struct BenchProfileJSON: JSONBodyData, Codable {
    let displayName: String
    let userID: Int
    let score: Double
    let isActive: Bool
    let nickname: String?
    let tags: [String]
    let counters: [String: Int]
    let createdAt: Date
    let homepage: URL
    let address: BenchAddress
}

struct BenchProfileForm: URLEncodedBodyData, Codable {
    let displayName: String
    let userID: Int
    let score: Double
    let isActive: Bool
    let nickname: String?
    let tags: [String]
    let counters: [String: Int]
    let createdAt: Date
    let homepage: URL
    let address: BenchAddress
}

private func profileValues(_ index: Int) -> (String, Int, Double, Bool, String?, [String], [String: Int], Date, URL, BenchAddress) {
    ("Ada \"The Countess\" Lovelace\n\(index)", 1_815 + index, 0.875 + Double(index % 7), index % 2 == 0,
     index % 3 == 0 ? nil : "ada & co", ["math", "poetry", "engines"], ["posts": 42, "likes": index],
     Date(timeIntervalSince1970: 1_700_000_000 + Double(index)), URL(string: "https://example.com/users/\(index)?tab=home")!,
     BenchAddress(street: "12 St. James's Square", postCode: "SW1Y 4LB"))
}

func encodingFigure(_ bench: Bench) -> [Row] {
    let count = bench.options.count(20_000, quick: 5_000)
    let jsonValues = (0..<64).map { index -> BenchProfileJSON in
        let v = profileValues(index)
        return BenchProfileJSON(displayName: v.0, userID: v.1, score: v.2, isActive: v.3, nickname: v.4, tags: v.5,
                                counters: v.6, createdAt: v.7, homepage: v.8, address: v.9)
    }
    let formValues = (0..<64).map { index -> BenchProfileForm in
        let v = profileValues(index)
        return BenchProfileForm(displayName: v.0, userID: v.1, score: v.2, isActive: v.3, nickname: v.4, tags: v.5,
                                counters: v.6, createdAt: v.7, homepage: v.8, address: v.9)
    }
    let encoder = JSONEncoder()
    encoder.keyEncodingStrategy = .convertToSnakeCase
    var failures = 0
    var bytes = 0
    func opsPerSecond(_ body: (Int) throws -> Data) -> Double {
        let start = now()
        for index in 0..<count {
            do { bytes &+= try body(index).count } catch { failures += 1 }
        }
        return Double(count) / (now() - start)
    }
    let results = interleaved(rounds: bench.rounds, [
        Contender("JSONEncoder") { opsPerSecond { try encoder.encode(jsonValues[$0 & 63]) } },
        Contender("Courier JSONBodyData") { opsPerSecond { try jsonValues[$0 & 63].encode() } },
        Contender("Courier URLEncodedBodyData") { opsPerSecond { try formValues[$0 & 63].encode() } },
    ])
    let figure = "Body encoding of a 10-field struct (\(grouped(count)) values per round)"
    let note = failures > 0 ? "\(failures) encoding errors" : "same values through every encoder; \(bytes) bytes written in all"
    return [
        Row(figure: figure, variant: "JSON (JSONBodyData)", unit: "ops/s", courier: results[1],
            baselineName: "JSONEncoder, .convertToSnakeCase", baseline: results[0], target: .ratioAtLeast(1.0),
            errors: failures, note: note),
        Row(figure: figure, variant: "URL-encoded form (URLEncodedBodyData)", unit: "ops/s", courier: results[2],
            baselineName: "JSONEncoder, .convertToSnakeCase (no form encoder in Foundation)", baseline: results[0],
            target: .ratioAtLeast(1.0), errors: failures),
    ]
}

// MARK: - 1 GiB multipart upload

/// The file to upload: made once under .build/bench and kept for later runs.
private func uploadFile(size: Int) -> URL {
    let url = URL(fileURLWithPath: ".build/bench/upload-\(size >> 20)MiB.bin")
    if let existing = try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int, existing == size {
        return url
    }
    try? FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
    guard FileManager.default.createFile(atPath: url.path, contents: nil),
          let handle = try? FileHandle(forWritingTo: url) else { fail("cannot write \(url.path)") }
    let chunk = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
    for _ in 0..<(size >> 20) { handle.write(chunk) }
    try? handle.close()
    return url
}

func multipartUploadFigure(_ bench: Bench) -> [Row] {
    let size = bench.options.count(1 << 30, quick: 256 << 20)
    let file = uploadFile(size: size)
    let base = bench.baseURL.absoluteString
    let tally = ChildTally()
    var peaks: [String: [Double]] = [:]
    let rounds = min(bench.rounds, 3)
    let baseline = "uploadTask(with:fromFile:)"
    var contenders = zip(childKinds("upload"), [baseline] + CourierTransport.allCases.map(\.name)).map { kind, name in
        Contender(name) {
            guard let report = tally.run([kind, String(size), base, file.path], timeout: 280) else { return .nan }
            peaks[name, default: []].append(Double(report.peakRSS) / 1e6)
            return Double(size) / 1e6 / report.seconds
        }
    }
    if FileManager.default.isExecutableFile(atPath: curlCommandPath) {
        // The same bytes streamed from the file as the whole body (no multipart), without
        // waiting for a 100 Continue, as the others do not.
        let arguments = ["-sS", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", "-H", "Expect:",
                         "-H", "Content-Type: application/octet-stream", "-T", file.path, base + "/upload"]
        contenders.append(Contender(commandLineName) {
            let run = runCommand(curlCommandPath, arguments, samplingPeak: true)
            guard let run, run.status == 0, run.output == "200", let peak = run.peakRSS else {
                let what = run.map { "status \($0.status), \($0.output) \($0.errorOutput)" } ?? "not started"
                tally.record(errors: 1, firstError: "curl upload: " + what)
                return .nan
            }
            peaks[commandLineName, default: []].append(Double(peak) / 1e6)
            return Double(size) / 1e6 / run.seconds
        })
    }
    let results = measure(bench, rounds: rounds, contenders)
    let figure = "Upload of a \(size >> 20) MiB file to nginx (fresh process per round, \(rounds) rounds)"
    let note = "MB/s counts the file's bytes; Courier's time includes writing the multipart body;"
        + " curl command line: -T FILE -X POST, the file as the whole body" + tally.note
    return [
        networkRow(figure, "MultipartFormData (streamed via a temporary file)", unit: "MB/s", results: results,
                   baseline: baseline, courier: \.name, commandLine: commandLineName, target: .ratioAtLeast(1.0),
                   errors: tally.failures, note: note),
        networkRow(figure, "peak RSS of the process", unit: "MB", results: peaks.mapValues(Summary.init),
                   baseline: baseline, courier: \.name, commandLine: commandLineName, target: .ratioAtMost(1.2),
                   errors: tally.failures),
    ]
}

/// A child that uploads `file` once, raw (`transport` nil) or through Courier, and reports time
/// and peak RSS.
func uploadChild(transport: CourierTransport?, size: Int, baseURL: URL, file: URL) -> ChildReport {
    var report = ChildReport(count: size)
    let sink = baseURL.appendingPathComponent("upload")
    let done = DispatchSemaphore(value: 0)
    let outcome = Mutex<String?>(nil)
    var queue: RequestQueue?
    let start = now()
    if let transport {
        var configuration = transport.configuration(label: "CourierBench.upload", maxConcurrentRequests: 6)
        configuration.timeoutInterval = 270
        let courier = RequestQueue(configuration: configuration, baseURL: baseURL)
        queue = courier
        let form = MultipartFormData()
        form.append(fileURL: file, withName: "file", fileName: "upload.bin")
        courier.addObserver(for: courier.add(UploadRequest(parameters: form))) { (result: Result<EmptyResponse, RequestError>) in
            if case .failure(let error) = result { outcome.withLock { $0 = "\(error)" } }
            done.signal()
        }
    } else {
        var request = URLRequest(url: sink)
        request.httpMethod = "POST"
        request.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
        URLSession.shared.uploadTask(with: request, fromFile: file) { _, response, error in
            if let error { outcome.withLock { $0 = "\(error)" } } else if (response as? HTTPURLResponse)?.statusCode != 200 {
                outcome.withLock { $0 = "status \((response as? HTTPURLResponse)?.statusCode ?? 0)" }
            }
            done.signal()
        }.resume()
    }
    if done.wait(timeout: .now() + 270) == .timedOut { outcome.withLock { $0 = "timed out" } }
    withExtendedLifetime(queue) {}
    report.seconds = now() - start
    report.peakRSS = procStatus("VmHWM")
    if let error = outcome.withLock({ $0 }) {
        report.errors = 1
        report.firstError = error
    }
    return report
}

struct UploadRequest: Request {
    typealias ResponseType = EmptyResponse
    let parameters: MultipartFormData
    var path: String { "/upload" }
    var method: HTTPMethod { .post }
}
