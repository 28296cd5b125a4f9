/*
 * module_def.h: the module definition of torchtally's three extensions (torchtally._C,
 * torchtally._C_cuda, torchtally._nccl): multi-phase init (PEP 489) with per-module state, as in
 * CPython's Modules/_bisectmodule.c. A macro in a header, so that torchtally._nccl, which binds
 * no kernel, links nothing of the others.
 */
#ifndef TT_MODULE_DEF_H
#define TT_MODULE_DEF_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* Defines `module_def`, the PyModuleDef of `qualified_name` ("torchtally._C") with `doc` and a
 * per-module state of type `state_type`, from what the including file defines: module_methods,
 * module_exec (the Py_mod_exec slot), module_traverse, and module_clear (which m_free runs too).
 * The file's PyInit_<name>() returns PyModuleDef_Init(&module_def). */
#define TT_MODULE_DEF(qualified_name, doc, state_type)                                             \
    static void module_free(void *module) { module_clear((PyObject *)module); }                    \
                                                                                                   \
    static PyModuleDef_Slot module_slots[] = {                                                     \
        {Py_mod_exec, module_exec},                                                                \
        {0, NULL},                                                                                 \
    };                                                                                             \
                                                                                                   \
    static struct PyModuleDef module_def = {                                                       \
        PyModuleDef_HEAD_INIT,         .m_name = (qualified_name),  .m_doc = (doc),                \
        .m_size = sizeof(state_type),  .m_methods = module_methods, .m_slots = module_slots,       \
        .m_traverse = module_traverse, .m_clear = module_clear,     .m_free = module_free,         \
    }

#endif /* TT_MODULE_DEF_H */
