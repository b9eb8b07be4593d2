/*
 * unit_main.h - the main() of a unit test binary: its tests run in order
 * as one cmocka group, and its exit status is the number that failed.
 *
 * A file names its tests once, in an X-macro list, and hands the list to
 * one of the mains below:
 *
 *   #define TESTS(X) X(test_a) X(test_b) X(test_c, setup, teardown)
 *   WR_UNIT_MAIN(NULL, NULL, TESTS)
 *
 * X(name) is a test without fixtures of its own; X(name, setup, teardown)
 * one that runs between its own setup and teardown (cmocka's
 * CMFixtureFunction). The list's order is the run order.
 *
 *   WR_UNIT_MAIN(group_setup, group_teardown, LIST)
 *     the group's fixtures (run once, around all the tests), or NULL.
 *   WR_UNIT_MAIN_EACH(setup, teardown, LIST)
 *     every test of LIST (all of them X(name)) runs between setup and
 *     teardown, as if each were X(name, setup, teardown).
 *
 * Include it after <cmocka.h>.
 */
#ifndef WR_UNIT_MAIN_H
#define WR_UNIT_MAIN_H

/* The X of a list: one CMUnitTest initializer and its comma, for X(name)
 * or X(name, setup, teardown). */
#define WR_UNIT_TEST(...)                                                                          \
    WR_UNIT_TEST_PICK_(__VA_ARGS__, WR_UNIT_TEST_FIXED_, _, WR_UNIT_TEST_BARE_, _)(__VA_ARGS__)
#define WR_UNIT_TEST_PICK_(A, B, C, PICK, ...) PICK
#define WR_UNIT_TEST_BARE_(NAME)               cmocka_unit_test(NAME),
#define WR_UNIT_TEST_FIXED_(NAME, SETUP, TEARDOWN)                                                 \
    cmocka_unit_test_setup_teardown(NAME, SETUP, TEARDOWN),

#define WR_UNIT_MAIN(SETUP, TEARDOWN, LIST)                                                        \
    int main(void)                                                                                 \
    {                                                                                              \
        const struct CMUnitTest tests[] = {LIST(WR_UNIT_TEST)};                                    \
        return cmocka_run_group_tests(tests, SETUP, TEARDOWN);                                     \
    }

#define WR_UNIT_MAIN_EACH(SETUP, TEARDOWN, LIST)                                                   \
    int main(void)                                                                                 \
    {                                                                                              \
        struct CMUnitTest tests[] = {LIST(WR_UNIT_TEST)};                                          \
        for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {                            \
            tests[i].setup_func = SETUP;                                                           \
            tests[i].teardown_func = TEARDOWN;                                                     \
        }                                                                                          \
        return cmocka_run_group_tests(tests, NULL, NULL);                                          \
    }

#endif
