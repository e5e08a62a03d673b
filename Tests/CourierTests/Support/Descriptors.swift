import Foundation

/// How many of this process's open descriptors name `folder` or a file in it (Linux's
/// /proc/self/fd). Counting only those makes a leak check independent of whatever else the
/// process opens or closes meanwhile (other tests' sockets and threads winding down).
func openDescriptors(into folder: URL) -> Int {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    let path = folder.resolvingSymlinksInPath().path
    return entries.filter { entry in
        let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(entry)")) ?? ""
        return target == path || target.hasPrefix(path + "/")
    }.count
}
