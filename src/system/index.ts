// Systems: parameter descriptors and decorators, System, running, validation.
export { Res, ResMut, Out } from './params.js';
export type { Param, ParamAccess, ParamOptions, ParamValue, ParamValues } from './params.js';
export type { OwnClass } from './own-class.js';
export { res, resMut, out } from './decorators.js';
export type { ParamDecorator } from './decorators.js';
export { System, system, systemOf, Unit } from './system.js';
export type { AnySystem, SystemFn, SystemAccess, SystemOptions, SystemDecorator } from './system.js';
export { SystemError } from './system-error.js';
export type { SystemErrorKind } from './system-error.js';
export { validate } from './validate.js';
export type { MissingParam } from './validate.js';
export type { BorrowWaitOptions } from './with-borrow.js';
