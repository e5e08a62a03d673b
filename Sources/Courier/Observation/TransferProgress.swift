/// How far a request's transfer has come.
///
/// ```swift
/// queue.addProgressObserver(for: id) { progress in
///     bar.value = progress.fractionSent ?? 0
/// }
/// ```
public struct TransferProgress: Sendable, Hashable, CustomStringConvertible {
    /// Body bytes sent so far.
    public var bytesSent: Int64
    /// The body's size, or a negative number (`NSURLSessionTransferSizeUnknown`) when unknown.
    public var totalBytesToSend: Int64
    /// Response body bytes received so far.
    public var bytesReceived: Int64
    /// The response body's announced size, or a negative number when unknown.
    public var totalBytesToReceive: Int64

    /// Creates a progress value; the defaults describe a transfer that has not started and whose
    /// sizes are unknown.
    public init(bytesSent: Int64 = 0, totalBytesToSend: Int64 = -1, bytesReceived: Int64 = 0, totalBytesToReceive: Int64 = -1) {
        self.bytesSent = bytesSent
        self.totalBytesToSend = totalBytesToSend
        self.bytesReceived = bytesReceived
        self.totalBytesToReceive = totalBytesToReceive
    }

    /// The share of the body sent, from 0 to 1, or `nil` when its size is unknown.
    public var fractionSent: Double? {
        totalBytesToSend > 0 ? min(1, Double(bytesSent) / Double(totalBytesToSend)) : nil
    }

    /// The share of the response received, from 0 to 1, or `nil` when its size is unknown.
    public var fractionReceived: Double? {
        totalBytesToReceive > 0 ? min(1, Double(bytesReceived) / Double(totalBytesToReceive)) : nil
    }

    public var description: String {
        func total(_ value: Int64) -> String { value >= 0 ? "\(value)" : "?" }
        return "sent \(bytesSent)/\(total(totalBytesToSend)) B, received \(bytesReceived)/\(total(totalBytesToReceive)) B"
    }
}
