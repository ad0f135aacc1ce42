export declare const FLOW_README: string
export declare const FLOW_HEADING: string
export declare function flowTarget(path: string): string
export declare function flowProblems(root: string, markdown: string): string[]
export declare function checkFlow(root: string): string[]
