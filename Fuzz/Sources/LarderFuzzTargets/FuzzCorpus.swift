import Foundation

/// Reading, replaying and writing corpus files.
public enum FuzzCorpus {
    /// The inputs in `paths` (files, or every regular file in a directory), sorted by path.
    public static func inputs(at paths: [String]) -> [(path: String, bytes: [UInt8])] {
        var files: [String] = []
        for path in paths {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { continue }
            if isDirectory.boolValue {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
                files += names.filter { !$0.hasPrefix(".") }.map { path + "/" + $0 }
            } else {
                files.append(path)
            }
        }
        return files.sorted().compactMap { file in
            FileManager.default.contents(atPath: file).map { (file, [UInt8]($0)) }
        }
    }

    /// Runs every input through `target`; prints failures; true when all pass.
    static func replay(_ target: FuzzTarget, paths: [String]) -> Bool {
        var failures = 0
        let inputs = inputs(at: paths)
        for (path, bytes) in inputs {
            do throws(FuzzFailure) { try target.run(bytes) } catch {
                failures += 1
                print("FAIL \(path): \(error)")
            }
        }
        print("\(target.rawValue): \(inputs.count) inputs, \(failures) failures")
        return failures == 0
    }

    /// Writes `FuzzSeeds.seeds(for:)` into `directory`, one file per seed.
    static func writeSeeds(of target: FuzzTarget, to directory: String) -> Bool {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            for seed in FuzzSeeds.seeds(for: target) {
                try Data(seed.bytes).write(to: URL(fileURLWithPath: directory + "/" + seed.name))
            }
            return true
        } catch {
            print("cannot write seeds: \(error)")
            return false
        }
    }
}
